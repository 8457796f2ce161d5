//! Integration tests of the `sweep` command line: arguments and usage errors, `--resume` with
//! the flags typed beside it, `sweep show`, and what the binary prints and exits with. The
//! engine's behaviour is tested in `vernier-sweep`'s own tests.

mod agent;
mod arguments;
mod capture;
mod fault_matrix;
mod fault_matrix_agent;
mod fault_matrix_replay;
mod fault_matrix_shard;
mod gpu;
mod hosted;
mod progress;
mod resume;
mod shards;
mod store;
mod support;
mod surface;
