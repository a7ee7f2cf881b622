//! The headless runner's driving programs (`examples/headless_drive.rs`): the tests in that
//! file, on how a program's timed commands become each fixed step's inputs.

#[allow(dead_code)]
#[path = "../examples/headless_drive.rs"]
mod headless_drive;
