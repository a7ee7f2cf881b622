//! Most of the workspace's integration tests, in one test binary: each test binary links all
//! of Bevy and Rapier, and twenty-six of them took a few minutes of every build to link. Each
//! file here is a module of this crate, and the shared helpers are [`common`]. Run one file's
//! tests with its name as the filter: `cargo test --test integration vehicle_files::`.
//!
//! `rapier_setup`, `parallel_step` and `batched_step` stay binaries of their own: CI runs
//! them again with Bevy's multi-threaded task pools (see `.ci/run`), and builds only them
//! for that.

mod common;

mod chassis_contact;
mod chassis_physics;
mod chassis_validation;
mod controls_levers;
mod custom_blocks;
mod custom_file_blocks;
mod driver_input;
mod drivetrain_graph;
mod drivetrain_physics;
mod heavy_powertrain;
mod hybrid;
mod plot_telemetry;
mod runner_program;
mod test_track_tour;
mod tracked;
mod trailers;
mod user_modules;
mod vehicle_file_errors;
mod vehicle_file_fuzz;
mod vehicle_files;
mod vehicle_hot_reload;
mod vehicle_library;
mod vehicle_topologies;
