//! Integration tests against a real Docker engine.
//!
//! A missing engine or image fails these tests loudly; only `VERNIER_SKIP_DOCKER_TESTS=1`
//! skips them (CI never sets it). Each test labels its containers and volumes with its own
//! run ID and checks that none remain, so tests in separate processes never interfere.

mod attacks;
mod basics;
mod support;
