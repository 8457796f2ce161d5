//! The run crate against the simulator over loopback: the target's model rule and identity.

mod target;
