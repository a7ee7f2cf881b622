//! Malformed vehicle files: each case takes a small valid set of files (vehicle, topology,
//! tire, torque table), breaks one thing, and checks that the error names the right file, line,
//! column, field path and reason — and that nothing panics.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use bevy_vehicle_physics::assets::{FileBlockTypes, VehicleDescription, VehicleFileError};

const VEHICLE: &str = "vehicles/test.vehicle.ron";
const TOPOLOGY: &str = "topologies/test.topology.ron";
const TIRE: &str = "tires/test.tire.ron";
const CSV: &str = "engines/test.csv";

const BASE_VEHICLE: &str = r#"// A minimal valid vehicle for the error tests.
Vehicle(
    name: "test car",
    topology: "topologies/test.topology.ron",
    chassis: (
        mass: 1200.0,
        inertia: (500.0, 1800.0, 1700.0),
        center_of_mass: (0.0, 0.2, -0.2),
        body_half_extents: (0.9, 0.45, 2.1),
        body_center: (0.0, 0.4, 0.0),
    ),
    axles: [
        (
            z: -1.3,
            track: 1.55,
            steered: true,
            wheel: (
                radius: 0.31,
                width: 0.2,
                inertia: 1.1,
                tire: "tires/test.tire.ron",
                suspension: (stiffness: 30000.0, bump_damping: 2400.0),
            ),
        ),
        (
            z: 1.3,
            track: 1.52,
            wheel: (
                tire: "tires/test.tire.ron",
                radius: 0.3,
                width: 0.19,
                inertia: 1.0,
                suspension: (stiffness: 25000.0, bump_damping: 2000.0),
            ),
        ),
    ],
    blocks: {
        "engine": (torque_curve: Csv("engines/test.csv"), max_rpm: 6500.0),
        "gearbox": (forward_ratios: [3.5, 2.1, 1.4, 1.0], reverse_ratios: [3.2]),
        "differential": (ratio: 3.9),
    },
    brakes: (max_torque: 1800.0, front_bias: 0.7, handbrake_axle: 1),
    steering: (max_angle: 0.6, max_rate: 2.5, ackermann: 1.0),
    aerodynamics: (drag_area: 0.6),
)
"#;

const BASE_TOPOLOGY: &str = r#"// Front-wheel drive.
Topology(
    blocks: {
        "engine": Engine,
        "clutch": Clutch,
        "gearbox": Gearbox(shift_time: 0.3),
        "differential": Differential(torque_bias: 0.5),
        "wheel_fl": Wheel,
        "wheel_fr": Wheel,
        "wheel_rl": Wheel,
        "wheel_rr": Wheel,
    },
    connections: {
        "clutch": "engine",
        "gearbox": "clutch",
        "differential": "gearbox",
        "wheel_fl": "differential.left",
        "wheel_fr": "differential.right",
    },
    axles: [
        (left: "wheel_fl", right: "wheel_fr"),
        (left: "wheel_rl", right: "wheel_rr"),
    ],
)
"#;

const BASE_TIRE: &str = r#"Tire(
    model: LinearTire((longitudinal_stiffness: 16.0, cornering_stiffness: 12.0)),
    relaxation_length: (0.15, 0.5),
    damping: (0.35, 0.2),
    rolling_resistance: 0.012,
)
"#;

/// The shipped passenger tire's Magic Formula with its lateral friction reference at zero.
const MAGIC_FORMULA_ZERO_LATERAL_REFERENCE: &str = "model: MagicFormula((
        fz0: 4000.0, mu_reference: 1.21, lateral_mu_reference: Some(0.0),
        p_cx1: 1.685, p_dx1: 1.21, p_dx2: -0.037, p_ex1: 0.344, p_ex2: 0.095, p_ex3: -0.02,
        p_ex4: 0.0, p_kx1: 21.51, p_kx2: -0.163, p_kx3: 0.245, p_hx1: 0.0, p_hx2: 0.0,
        p_vx1: 0.0, p_vx2: 0.0, p_cy1: 1.193, p_dy1: -0.99, p_dy2: 0.145, p_ey1: -1.003,
        p_ey2: -0.537, p_ey3: -0.083, p_ky1: -14.95, p_ky2: 2.13, p_hy1: 0.0, p_hy2: 0.0,
        p_vy1: 0.0, p_vy2: 0.0,
    )),";

const BASE_CSV: &str = "rpm,torque_nm\n1000,150\n2000,240\n4000,250\n6500,190\n";

/// One change to the base files.
enum Edit {
    /// In `file`, replace the only occurrence of `from` with `to`.
    Replace(&'static str, &'static str, &'static str),
    /// Take `file` away, so that reading it fails.
    Remove(&'static str),
}

use Edit::{Remove, Replace};

/// One malformed set of files and the error it must give.
struct Case {
    name: &'static str,
    edits: Vec<Edit>,
    /// The file the error must point into.
    file: &'static str,
    /// Where in that file (after the edits): the first occurrence of `at.1` at or after the
    /// only occurrence of `at.0`, or the end of `at.0` when `at.1` is empty.
    at: (&'static str, &'static str),
    /// The field path.
    field: &'static str,
    /// A substring of the reason.
    reason: &'static str,
}

fn case(
    name: &'static str,
    edits: Vec<Edit>,
    file: &'static str,
    at: (&'static str, &'static str),
    field: &'static str,
    reason: &'static str,
) -> Case {
    Case {
        name,
        edits,
        file,
        at,
        field,
        reason,
    }
}

fn base_files() -> BTreeMap<&'static str, String> {
    BTreeMap::from([
        (VEHICLE, BASE_VEHICLE.to_owned()),
        (TOPOLOGY, BASE_TOPOLOGY.to_owned()),
        (TIRE, BASE_TIRE.to_owned()),
        (CSV, BASE_CSV.to_owned()),
    ])
}

/// The only byte offset of `needle` in `text`.
fn unique(text: &str, needle: &str, what: &str) -> Result<usize, String> {
    let mut found = text.match_indices(needle).map(|(i, _)| i);
    match (found.next(), found.next()) {
        (Some(i), None) => Ok(i),
        (None, _) => Err(format!("{what} `{needle}` not found")),
        (Some(_), Some(_)) => Err(format!("{what} `{needle}` is not unique")),
    }
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// The files after `edits`.
fn apply(edits: &[Edit]) -> Result<BTreeMap<&'static str, String>, String> {
    let mut files = base_files();
    for edit in edits {
        match *edit {
            Replace(file, from, to) => {
                let text = files
                    .get_mut(file)
                    .ok_or_else(|| format!("no file {file}"))?;
                let at = unique(text, from, "edit")?;
                text.replace_range(at..at + from.len(), to);
            }
            Remove(file) => {
                files.remove(file);
            }
        }
    }
    Ok(files)
}

fn parse(files: &BTreeMap<&'static str, String>) -> Result<VehicleDescription, VehicleFileError> {
    VehicleDescription::parse(
        VEHICLE,
        &files[VEHICLE],
        &FileBlockTypes::default(),
        |path| {
            files
                .get(path)
                .cloned()
                .ok_or_else(|| "no such file".to_owned())
        },
    )
}

/// What is wrong with the outcome of `case`, if anything.
fn check(case: &Case) -> Result<(), String> {
    let files = apply(&case.edits)?;
    let text = files
        .get(case.file)
        .ok_or_else(|| format!("the expected file {} is not among the files", case.file))?;
    let anchor = unique(text, case.at.0, "anchor")?;
    let offset = match case.at.1 {
        "" => anchor + case.at.0.len(),
        target => {
            anchor
                + text[anchor..]
                    .find(target)
                    .ok_or_else(|| format!("`{target}` not found after the anchor"))?
        }
    };
    let (line, column) = line_col(text, offset);
    let error = match catch_unwind(AssertUnwindSafe(|| parse(&files))) {
        Err(_) => return Err("panicked".into()),
        Ok(Ok(_)) => return Err("was accepted".into()),
        Ok(Err(error)) => error,
    };
    // Shown with `--nocapture`, to read the messages.
    println!("{}:\n    {error}", case.name);
    let expected = format!(
        "{}:{line}:{column}: `{}`: …{}…",
        case.file, case.field, case.reason
    );
    if error.file.to_str() != Some(case.file)
        || (error.line, error.column) != (line, column)
        || error.field != case.field
        || !error.reason.contains(case.reason)
    {
        return Err(format!("expected {expected}\n      got {error}"));
    }
    // The displayed form names all of it.
    let shown = error.to_string();
    let prefix = match case.field {
        "" => format!("{}:{line}:{column}: ", case.file),
        field => format!("{}:{line}:{column}: `{field}`: ", case.file),
    };
    if !shown.starts_with(&prefix) {
        return Err(format!("displayed as {shown}"));
    }
    Ok(())
}

fn cases() -> Vec<Case> {
    vec![
        // --- Syntax -------------------------------------------------------------------------
        case(
            "syntax: missing comma between fields",
            vec![Replace(VEHICLE, "mass: 1200.0,", "mass: 1200.0")],
            VEHICLE,
            ("inertia: (500.0", "inertia"),
            "chassis",
            "syntax error: expected `,` or `)` closing the `(`",
        ),
        case(
            "syntax: unclosed bracket",
            vec![Replace(VEHICLE, "1.4, 1.0]", "1.4, 1.0")],
            VEHICLE,
            ("reverse_ratios", ":"),
            "blocks.gearbox.forward_ratios",
            "expected `,` or `]` closing the `[`",
        ),
        case(
            "syntax: unterminated string",
            vec![Replace(
                VEHICLE,
                r#""differential": (ratio"#,
                r#""differential: (ratio"#,
            )],
            VEHICLE,
            (r#""differential: (ratio"#, r#"""#),
            "blocks",
            "syntax error: expected the end of this string",
        ),
        case(
            "syntax: garbage after the value",
            vec![Replace(
                VEHICLE,
                "drag_area: 0.6),\n)\n",
                "drag_area: 0.6),\n)\nextra\n",
            )],
            VEHICLE,
            ("extra", "extra"),
            "",
            "syntax error: expected the end of the file",
        ),
        // --- Unknown fields -----------------------------------------------------------------
        case(
            "unknown field at the top level",
            vec![Replace(
                VEHICLE,
                r#"name: "test car","#,
                r#"name: "test car", colour: 3,"#,
            )],
            VEHICLE,
            ("colour", "colour"),
            "colour",
            "unknown field `colour`",
        ),
        case(
            "unknown field in the chassis",
            vec![Replace(VEHICLE, "mass: 1200.0", "masss: 1200.0")],
            VEHICLE,
            ("masss", "masss"),
            "chassis.masss",
            "did you mean `mass`?",
        ),
        case(
            "unknown field in a block",
            vec![Replace(
                VEHICLE,
                "reverse_ratios: [3.2]",
                "reverse_ratios: [3.2], shift_tme: 0.2",
            )],
            VEHICLE,
            ("shift_tme", "shift_tme"),
            "blocks.gearbox.shift_tme",
            "did you mean `shift_time`?",
        ),
        case(
            "unknown field in a tire file",
            vec![Replace(TIRE, "rolling_resistance", "rolling_resistanse")],
            TIRE,
            ("rolling_resistanse", "rolling_resistanse"),
            "rolling_resistanse",
            "did you mean `rolling_resistance`?",
        ),
        case(
            "unknown field in a topology file",
            vec![Replace(TOPOLOGY, "connections:", "conections:")],
            TOPOLOGY,
            ("conections", "conections"),
            "conections",
            "did you mean `connections`?",
        ),
        case(
            "unknown block type, with a suggestion",
            vec![Replace(TOPOLOGY, "Gearbox(shift_time", "Gearbx(shift_time")],
            TOPOLOGY,
            ("Gearbx", "Gearbx"),
            "blocks.gearbox",
            "did you mean `Gearbox`?",
        ),
        // --- The graph ----------------------------------------------------------------------
        case(
            "a port connected twice",
            vec![Replace(TOPOLOGY, "differential.right", "differential.left")],
            TOPOLOGY,
            (r#""wheel_fr": "differential"#, r#""differential"#),
            "connections.wheel_fr",
            "port `left` of 'differential' is connected twice",
        ),
        case(
            "a required port left unconnected",
            vec![Replace(
                TOPOLOGY,
                "\"wheel_fr\": \"differential.right\",\n",
                "",
            )],
            TOPOLOGY,
            (r#""differential": Differential"#, "Differential"),
            "blocks.differential",
            "right",
        ),
        case(
            "a block with its input undriven",
            vec![Replace(TOPOLOGY, "\"gearbox\": \"clutch\",\n", "")],
            TOPOLOGY,
            (r#""gearbox": Gearbox"#, "Gearbox"),
            "blocks.gearbox",
            "gearbox",
        ),
        case(
            "a cycle",
            vec![
                Replace(
                    TOPOLOGY,
                    r#""clutch": "engine","#,
                    r#""clutch": "differential.right","#,
                ),
                Replace(TOPOLOGY, "\"wheel_fr\": \"differential.right\",\n", ""),
            ],
            TOPOLOGY,
            (r#""clutch": "differential"#, r#""differential"#),
            "connections.clutch",
            "cycle",
        ),
        case(
            "a second root (two engines)",
            vec![Replace(
                TOPOLOGY,
                r#""engine": Engine,"#,
                r#""engine": Engine,
        "engine_2": Engine(torque_curve: [(1000.0, 100.0), (5000.0, 120.0)]),"#,
            )],
            TOPOLOGY,
            (r#""engine_2": Engine"#, "Engine"),
            "blocks.engine_2",
            "engine_2",
        ),
        case(
            "a connection naming an unknown block",
            vec![Replace(
                TOPOLOGY,
                r#""differential": "gearbox","#,
                r#""differential": "gearbx","#,
            )],
            TOPOLOGY,
            (r#""gearbx""#, r#""gearbx""#),
            "connections.differential",
            "no block called 'gearbx' (did you mean 'gearbox'?)",
        ),
        case(
            "a connection naming an unknown port",
            vec![Replace(
                TOPOLOGY,
                "differential.right",
                "differential.rigth",
            )],
            TOPOLOGY,
            (r#""differential.rigth""#, r#""differential.rigth""#),
            "connections.wheel_fr",
            "'differential' has no port `rigth`; its ports are 'left', 'right'",
        ),
        case(
            "a wheel on no axle",
            vec![Replace(
                TOPOLOGY,
                r#""wheel_rr": Wheel,"#,
                r#""wheel_rr": Wheel,
        "wheel_spare": Wheel,"#,
            )],
            TOPOLOGY,
            (r#""wheel_spare": Wheel"#, "Wheel"),
            "blocks.wheel_spare",
            "wheel 'wheel_spare' is on no axle",
        ),
        case(
            "a duplicated map key",
            vec![Replace(
                VEHICLE,
                r#""differential": (ratio: 3.9),"#,
                r#""differential": (ratio: 3.9),
        "gearbox": (shift_time: 0.2),"#,
            )],
            VEHICLE,
            (r#""gearbox": (shift_time"#, r#""gearbox""#),
            "blocks.gearbox",
            "block 'gearbox' is given twice",
        ),
        // --- Values -------------------------------------------------------------------------
        case(
            "a gear ratio of 0",
            vec![Replace(
                VEHICLE,
                "[3.5, 2.1, 1.4, 1.0]",
                "[3.5, 2.1, 0.0, 1.0]",
            )],
            VEHICLE,
            ("[3.5, 2.1, 0.0", "0.0"),
            "blocks.gearbox.forward_ratios[2]",
            "must be greater than 0, got 0",
        ),
        case(
            "a negative gear ratio",
            vec![Replace(
                VEHICLE,
                "reverse_ratios: [3.2]",
                "reverse_ratios: [-3.2]",
            )],
            VEHICLE,
            ("-3.2", "-3.2"),
            "blocks.gearbox.reverse_ratios[0]",
            "must be greater than 0, got -3.2",
        ),
        case(
            "a negative mass",
            vec![Replace(VEHICLE, "mass: 1200.0", "mass: -1200.0")],
            VEHICLE,
            ("-1200.0", "-1200.0"),
            "chassis.mass",
            "must be greater than 0 (kg), got -1200",
        ),
        case(
            "a negative track, quoted as written (an f32 of -1.505, not its f64 expansion)",
            vec![Replace(VEHICLE, "track: 1.55", "track: -1.505")],
            VEHICLE,
            ("-1.505", "-1.505"),
            "axles[0].track",
            "must be greater than 0 (m), got -1.505",
        ),
        case(
            "a NaN",
            vec![Replace(VEHICLE, "stiffness: 30000.0", "stiffness: NaN")],
            VEHICLE,
            ("NaN", "NaN"),
            "axles[0].wheel.suspension.stiffness",
            "NaN",
        ),
        case(
            "an infinity",
            vec![Replace(VEHICLE, "drag_area: 0.6", "drag_area: inf")],
            VEHICLE,
            ("inf)", "inf"),
            "aerodynamics.drag_area",
            "inf",
        ),
        case(
            "a speed limiter at no speed",
            vec![Replace(
                VEHICLE,
                "aerodynamics: (drag_area: 0.6),",
                "aerodynamics: (drag_area: 0.6),\n    speed_limiter: Some((max_speed: 0.0)),",
            )],
            VEHICLE,
            ("max_speed: 0.0", "0.0"),
            "speed_limiter.max_speed",
            "must be greater than 0",
        ),
        case(
            "a torque table not sorted by rpm (inline)",
            vec![Replace(
                VEHICLE,
                r#"Csv("engines/test.csv")"#,
                "[(1000.0, 150.0), (3000.0, 250.0), (2000.0, 240.0)]",
            )],
            VEHICLE,
            ("(2000.0, 240.0)", "2000.0"),
            "blocks.engine.torque_curve[2][0]",
            "sorted by rpm",
        ),
        case(
            "a torque table not sorted by rpm (CSV file)",
            vec![Replace(CSV, "4000,250", "1500,250")],
            CSV,
            ("1500,250", "1500"),
            "blocks.engine.torque_curve[2][0]",
            "sorted by rpm",
        ),
        case(
            "a negative torque in a CSV torque table",
            vec![Replace(CSV, "2000,240", "2000,-240")],
            CSV,
            ("2000,-240", "-240"),
            "blocks.engine.torque_curve[1][1]",
            "must not be negative, got -240",
        ),
        case(
            "a CSV table with a header and no rows",
            vec![Replace(
                CSV,
                "\n1000,150\n2000,240\n4000,250\n6500,190\n",
                "\n",
            )],
            CSV,
            ("rpm,torque_nm", "rpm"),
            "blocks.engine.torque_curve",
            "got 0",
        ),
        case(
            "a CSV cell that is not a number",
            vec![Replace(CSV, "2000,240", "2000,24O")],
            CSV,
            ("24O", "24O"),
            "blocks.engine.torque_curve[1]",
            "expected a number, found `24O`",
        ),
        case(
            "a missing topology file",
            vec![Remove(TOPOLOGY)],
            VEHICLE,
            (r#""topologies/test"#, r#"""#),
            "topology",
            "cannot read file 'topologies/test.topology.ron'",
        ),
        case(
            "a missing tire file",
            vec![Replace(
                VEHICLE,
                r#"(
                tire: "tires/test.tire.ron""#,
                r#"(
                tire: "tires/missing.tire.ron""#,
            )],
            VEHICLE,
            (r#""tires/missing"#, r#"""#),
            "axles[1].wheel.tire",
            "cannot read file 'tires/missing.tire.ron'",
        ),
        case(
            "a missing CSV file",
            vec![Remove(CSV)],
            VEHICLE,
            (r#"Csv("engines"#, "Csv"),
            "blocks.engine.torque_curve",
            "cannot read file 'engines/test.csv'",
        ),
        case(
            "a string where a number goes",
            vec![Replace(VEHICLE, "track: 1.55", r#"track: "wide""#)],
            VEHICLE,
            (r#""wide""#, r#""wide""#),
            "axles[0].track",
            r#"expected a number, found `"wide"`"#,
        ),
        case(
            "a number where a list goes",
            vec![Replace(
                VEHICLE,
                "forward_ratios: [3.5, 2.1, 1.4, 1.0]",
                "forward_ratios: 3.5",
            )],
            VEHICLE,
            ("forward_ratios: 3.5", "3.5"),
            "blocks.gearbox.forward_ratios",
            "",
        ),
        case(
            "a missing required field",
            vec![Replace(VEHICLE, "track: 1.52,\n", "")],
            VEHICLE,
            ("(\n            z: 1.3", "("),
            "axles[1]",
            "missing field `track`",
        ),
        case(
            "torque_bias out of range",
            vec![Replace(
                VEHICLE,
                "(ratio: 3.9)",
                "(ratio: 3.9, torque_bias: 1.5)",
            )],
            VEHICLE,
            ("torque_bias: 1.5", "1.5"),
            "blocks.differential.torque_bias",
            "must lie in [0, 1], got 1.5",
        ),
        case(
            "steering.max_angle at π/2 or more",
            vec![Replace(VEHICLE, "max_angle: 0.6", "max_angle: 1.6")],
            VEHICLE,
            ("1.6", "1.6"),
            "steering.max_angle",
            "(0, π/2)",
        ),
        case(
            "front_bias above 1",
            vec![Replace(VEHICLE, "front_bias: 0.7", "front_bias: 1.2")],
            VEHICLE,
            ("1.2", "1.2"),
            "brakes.front_bias",
            "got 1.2",
        ),
        case(
            "an ABS asking more than the tires' peak",
            vec![Replace(
                VEHICLE,
                "front_bias: 0.7,",
                "front_bias: 0.7, anti_lock: Some((peak_share: 1.2)),",
            )],
            VEHICLE,
            ("1.2", "1.2"),
            "brakes.anti_lock.peak_share",
            "must lie in [0, 1], got 1.2",
        ),
        case(
            "a handbrake axle beyond the axles",
            vec![Replace(VEHICLE, "handbrake_axle: 1", "handbrake_axle: 2")],
            VEHICLE,
            ("handbrake_axle: 2", "2"),
            "brakes.handbrake_axle",
            "must name one of the 2 axle(s)",
        ),
        case(
            "an override for a block the topology lacks",
            vec![Replace(
                VEHICLE,
                r#""differential": (ratio: 3.9),"#,
                r#""differential": (ratio: 3.9),
        "gearbx": (shift_time: 0.2),"#,
            )],
            VEHICLE,
            (r#""gearbx""#, r#""gearbx""#),
            "blocks.gearbx",
            "the topology has no block called 'gearbx' (did you mean 'gearbox'?)",
        ),
        case(
            "an override of the wrong block type",
            vec![Replace(
                VEHICLE,
                "(ratio: 3.9)",
                "Clutch(max_torque: 300.0)",
            )],
            VEHICLE,
            ("Clutch(", "Clutch"),
            "blocks.differential",
            "'differential' is a `Differential` in the topology, not a `Clutch`",
        ),
        case(
            "the vehicle's axle count differs from the topology's",
            vec![
                Replace(
                    TOPOLOGY,
                    r#""wheel_rr": Wheel,"#,
                    r#""wheel_rr": Wheel,
        "wheel_xl": Wheel,
        "wheel_xr": Wheel,"#,
                ),
                Replace(
                    TOPOLOGY,
                    r#"(left: "wheel_rl", right: "wheel_rr"),"#,
                    r#"(left: "wheel_rl", right: "wheel_rr"),
        (left: "wheel_xl", right: "wheel_xr"),"#,
                ),
            ],
            VEHICLE,
            ("axles: [", "["),
            "axles",
            "the topology has 3 axle(s) but the vehicle sets 2",
        ),
        // --- Where a value came from ----------------------------------------------------------
        case(
            "an error inside the topology file",
            vec![Replace(TOPOLOGY, "shift_time: 0.3", "shift_time: -0.3")],
            TOPOLOGY,
            ("-0.3", "-0.3"),
            "blocks.gearbox.shift_time",
            "must not be negative, got -0.3",
        ),
        case(
            "an error in a field the vehicle overrides",
            vec![Replace(
                VEHICLE,
                "reverse_ratios: [3.2]",
                "reverse_ratios: [3.2], shift_time: -0.2",
            )],
            VEHICLE,
            ("shift_time: -0.2", "-0.2"),
            "blocks.gearbox.shift_time",
            "must not be negative, got -0.2",
        ),
        case(
            "an error in a tire file",
            vec![Replace(
                TIRE,
                "relaxation_length: (0.15, 0.5)",
                "relaxation_length: (0.15, -0.5)",
            )],
            TIRE,
            ("-0.5", "-0.5"),
            "relaxation_length[1]",
            "got -0.5",
        ),
        case(
            "a bad coefficient of a tire model",
            vec![Replace(
                TIRE,
                "cornering_stiffness: 12.0",
                "cornering_stiffness: -12.0",
            )],
            TIRE,
            ("-12.0", "-12.0"),
            "model.cornering_stiffness",
            "must not be negative, got -12",
        ),
        case(
            "a Magic Formula tire's lateral friction reference of zero",
            vec![Replace(
                TIRE,
                "model: LinearTire((longitudinal_stiffness: 16.0, cornering_stiffness: 12.0)),",
                MAGIC_FORMULA_ZERO_LATERAL_REFERENCE,
            )],
            TIRE,
            ("lateral_mu_reference: Some(0.0)", "Some"),
            "model.lateral_mu_reference",
            "got 0",
        ),
        case(
            "a bad coefficient of an inline tire model",
            vec![Replace(
                VEHICLE,
                "tire: \"tires/test.tire.ron\",\n                radius: 0.3,",
                "tire: Tire(model: LinearTire((longitudinal_stiffness: 16.0, \
                 cornering_stiffness: 12.0, separate_axes: Some(1.5)))),\n                radius: 0.3,",
            )],
            VEHICLE,
            ("separate_axes: Some(1.5)", "Some"),
            "axles[1].wheel.tire.model.separate_axes",
            "must lie in (0, 1], got 1.5",
        ),
        case(
            "a negative speed term of the rolling resistance in a tire file",
            vec![Replace(
                TIRE,
                "rolling_resistance: 0.012,",
                "rolling_resistance: 0.012,\n    rolling_resistance_quadratic: -5.6e-6,",
            )],
            TIRE,
            ("-5.6e-6", "-5.6e-6"),
            "rolling_resistance_quadratic",
            "must not be negative, got -0.0000056",
        ),
        case(
            "a negative held-wheel damping in a tire file",
            vec![Replace(
                TIRE,
                "damping: (0.35, 0.2),",
                "damping: (0.35, 0.2),\n    held_damping: -0.65,",
            )],
            TIRE,
            ("-0.65", "-0.65"),
            "held_damping",
            "must not be negative, got -0.65",
        ),
        case(
            "an error in an inline tire",
            vec![Replace(
                VEHICLE,
                r#"(
                tire: "tires/test.tire.ron""#,
                r#"(
                tire: Tire(rolling_resistance: -0.01)"#,
            )],
            VEHICLE,
            ("-0.01", "-0.01"),
            "axles[1].wheel.tire.rolling_resistance",
            "got -0.01",
        ),
        // --- More of the same kinds ----------------------------------------------------------
        case(
            "syntax: an empty file",
            vec![Replace(VEHICLE, BASE_VEHICLE, "")],
            VEHICLE,
            ("", ""),
            "",
            "syntax error: expected a value",
        ),
        case(
            "syntax: the file ends before the closing parenthesis",
            vec![Replace(
                VEHICLE,
                "drag_area: 0.6),\n)\n",
                "drag_area: 0.6),\n",
            )],
            VEHICLE,
            ("drag_area: 0.6),\n", ""),
            "",
            "syntax error: expected `)` closing the `(` at line 2, column 8",
        ),
        case(
            "syntax: a syntax error in the topology file",
            vec![Replace(
                TOPOLOGY,
                r#"(left: "wheel_rl", right: "wheel_rr")"#,
                r#"(left: "wheel_rl" right: "wheel_rr")"#,
            )],
            TOPOLOGY,
            (r#""wheel_rl" right"#, "right"),
            "axles[1]",
            "syntax error: expected `,` or `)`",
        ),
        case(
            "the wrong struct name",
            vec![Replace(VEHICLE, "Vehicle(", "Vehicel(")],
            VEHICLE,
            ("Vehicel", "Vehicel"),
            "",
            "Vehicle",
        ),
        case(
            "a field given twice in a struct",
            vec![Replace(
                VEHICLE,
                "mass: 1200.0,",
                "mass: 1200.0, mass: 1300.0,",
            )],
            VEHICLE,
            ("mass: 1300.0", "mass"),
            "chassis.mass",
            "field `mass` is given twice",
        ),
        case(
            "a field given twice in a block override",
            vec![Replace(VEHICLE, "(ratio: 3.9)", "(ratio: 3.9, ratio: 4.1)")],
            VEHICLE,
            ("ratio: 4.1", "ratio"),
            "blocks.differential.ratio",
            "field `ratio` is given twice",
        ),
        case(
            "columns count characters, not bytes",
            vec![Replace(
                VEHICLE,
                "track: 1.55",
                r#"track: /* ≈ 1.5 m, ± 2 cm */ "wide""#,
            )],
            VEHICLE,
            (r#""wide""#, r#""wide""#),
            "axles[0].track",
            "",
        ),
        case(
            "an unknown field in a suspension",
            vec![Replace(VEHICLE, "stiffness: 25000.0", "stifness: 25000.0")],
            VEHICLE,
            ("stifness", "stifness"),
            "axles[1].wheel.suspension.stifness",
            "did you mean `stiffness`?",
        ),
        case(
            "a CSV row with three columns",
            vec![Replace(CSV, "4000,250", "4000,250,7")],
            CSV,
            ("4000,250,7", "4000"),
            "blocks.engine.torque_curve[2]",
            "expected 2 columns, found 3",
        ),
        case(
            "block settings that are not a struct",
            vec![Replace(VEHICLE, "(ratio: 3.9)", "3.9")],
            VEHICLE,
            (r#""differential": 3.9"#, "3.9"),
            "blocks.differential",
            "expected the settings of 'differential'",
        ),
        case(
            "a Csv reference without a path",
            vec![Replace(VEHICLE, r#"Csv("engines/test.csv")"#, "Csv(3)")],
            VEHICLE,
            ("Csv(3)", "Csv"),
            "blocks.engine.torque_curve",
            "expected `Csv(\"path/to/table.csv\")`",
        ),
        case(
            "wheel settings in `blocks`",
            vec![Replace(
                VEHICLE,
                r#""differential": (ratio: 3.9),"#,
                r#""differential": (ratio: 3.9),
        "wheel_fl": (radius: 0.3),"#,
            )],
            VEHICLE,
            (r#""wheel_fl": ("#, "("),
            "blocks.wheel_fl",
            "'wheel_fl' is a wheel: set it in `axles`",
        ),
        case(
            "no substeps",
            vec![Replace(
                VEHICLE,
                r#"name: "test car","#,
                r#"name: "test car", substeps: 0,"#,
            )],
            VEHICLE,
            ("substeps: 0", "0"),
            "substeps",
            "must lie in [1,",
        ),
        case(
            "a body box that reaches the ground",
            vec![Replace(
                VEHICLE,
                "body_center: (0.0, 0.4, 0.0)",
                "body_center: (0.0, -0.1, 0.0)",
            )],
            VEHICLE,
            ("body_center: (0.0, -0.1, 0.0)", "-0.1"),
            "chassis.body_center[1]",
            "puts the body's box on the ground: its bottom lies at -0.550 m, the ground under its \
             front end at -0.313 m",
        ),
        case(
            "a raised axle that tilts the body's box onto the ground",
            vec![Replace(VEHICLE, "z: -1.3,", "z: -1.3, height: 0.3,")],
            VEHICLE,
            ("body_center: (0.0, 0.4, 0.0)", "0.4"),
            "chassis.body_center[1]",
            "puts the body's box on the ground: its bottom lies at -0.050 m, the ground under its \
             front end at 0.079 m (the line through the wheels' lowest points",
        ),
        case(
            "axles listed back to front",
            vec![Replace(VEHICLE, "z: -1.3,", "z: 1.4,")],
            VEHICLE,
            ("z: 1.3", "1.3"),
            "axles[1].z",
            "must lie behind axles[0] (z = 1.4 m): the axles are listed from front to back, and \
             −Z is forward, got 1.3",
        ),
        case(
            "an abbreviated field name",
            vec![Replace(VEHICLE, "aerodynamics: (", "aero: (")],
            VEHICLE,
            ("aero: (", "aero"),
            "aero",
            "unknown field `aero`; did you mean `aerodynamics`?",
        ),
        case(
            "a fraction where a whole number goes",
            vec![Replace(
                VEHICLE,
                r#"name: "test car","#,
                r#"name: "test car", substeps: 1.5,"#,
            )],
            VEHICLE,
            ("substeps: 1.5", "."),
            "substeps",
            "expected a whole number, found `1.5`",
        ),
        case(
            "a number written in hexadecimal",
            vec![Replace(VEHICLE, "mass: 1200.0", "mass: 0x4b0")],
            VEHICLE,
            ("mass: 0x4b0", "x"),
            "chassis.mass",
            "expected a number, found `0x4b0`",
        ),
        case(
            "a centre of mass behind every axle",
            vec![Replace(
                VEHICLE,
                "center_of_mass: (0.0, 0.2, -0.2)",
                "center_of_mass: (0.0, 0.2, 3.0)",
            )],
            VEHICLE,
            ("0.2, 3.0", "3.0"),
            "chassis.center_of_mass[2]",
            "puts no weight on axle 0",
        ),
        case(
            "a negative wheel radius",
            vec![Replace(VEHICLE, "radius: 0.31", "radius: -0.31")],
            VEHICLE,
            ("-0.31", "-0.31"),
            "axles[0].wheel.radius",
            "must be greater than 0",
        ),
        case(
            "a bad topology value in a block whose other fields the vehicle overrides",
            vec![Replace(
                TOPOLOGY,
                "Differential(torque_bias: 0.5)",
                "Differential(torque_bias: -0.5)",
            )],
            TOPOLOGY,
            ("-0.5", "-0.5"),
            "blocks.differential.torque_bias",
            "must lie in [0, 1], got -0.5",
        ),
        case(
            "an error in an inline topology",
            vec![Replace(
                VEHICLE,
                r#""topologies/test.topology.ron""#,
                r#"Topology(
        blocks: {
            "engine": Engine,
            "gearbox": Gearbox(efficiency: -1.0),
            "differential": Differential,
            "wheel_fl": Wheel,
            "wheel_fr": Wheel,
            "wheel_rl": Wheel,
            "wheel_rr": Wheel,
        },
        connections: {
            "gearbox": "engine",
            "differential": "gearbox",
            "wheel_fl": "differential.left",
            "wheel_fr": "differential.right",
        },
        axles: [(left: "wheel_fl", right: "wheel_fr"), (left: "wheel_rl", right: "wheel_rr")],
    )"#,
            )],
            VEHICLE,
            ("-1.0", "-1.0"),
            "topology.blocks.gearbox.efficiency",
            "got -1",
        ),
        // --- Modules --------------------------------------------------------------------------
        case(
            "module: unknown type",
            vec![modules("brake: Abs(limit: 0.1)")],
            VEHICLE,
            ("brake: Abs", "Abs"),
            "modules.brake",
            "unknown brake module `Abs`",
        ),
        case(
            "module: a type of another kind",
            vec![modules("brake: DirectDrive()")],
            VEHICLE,
            ("brake: DirectDrive", "DirectDrive"),
            "modules.brake",
            "`DirectDrive` is a drivetrain module, and this slot takes a brake module",
        ),
        case(
            "module: unknown slot",
            vec![modules("brakes: DirectDrive()")],
            VEHICLE,
            ("(brakes:", "brakes"),
            "modules.brakes",
            "unknown field `brakes`; did you mean `brake`?",
        ),
        case(
            "module: unknown setting",
            vec![modules("drivetrain: DirectDrive(max_torq: 300.0)")],
            VEHICLE,
            ("(max_torq:", "max_torq"),
            "modules.drivetrain.max_torq",
            "unknown field `max_torq`; did you mean `max_torque`?",
        ),
        case(
            "module: anti-roll bar on an axle that does not exist",
            vec![modules(
                "anti_roll_bars: { 2: LinearAntiRollBar(stiffness: 1.0) }",
            )],
            VEHICLE,
            ("{ 2:", "2"),
            "modules.anti_roll_bars[2]",
            "there is no axle 2: the vehicle has 2 axle(s)",
        ),
        case(
            "module: drives an axle that does not exist",
            vec![modules("drivetrain: DirectDrive(driven_axles: [1, 9])")],
            VEHICLE,
            ("driven_axles: [1, 9]", "9"),
            "modules.drivetrain.driven_axles[1]",
            "there is no axle 9: the vehicle has 2 axle(s)",
        ),
        case(
            "module: setting out of range",
            vec![modules(
                "anti_roll_bars: { 1: LinearAntiRollBar(stiffness: -5.0) }",
            )],
            VEHICLE,
            ("-5.0", "-5.0"),
            "modules.anti_roll_bars[1].stiffness",
            "must not be negative",
        ),
    ]
}

/// Adds a `modules` field with `slots` to the vehicle.
fn modules(slots: &'static str) -> Edit {
    let to = Box::leak(format!("drag_area: 0.6),\n    modules: ({slots}),\n)\n").into_boxed_str());
    Replace(VEHICLE, "drag_area: 0.6),\n)\n", to)
}

#[test]
fn the_base_files_are_valid() {
    let files = base_files();
    let d = parse(&files).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.axles.len(), 2);
    assert_eq!(d.blocks.len(), 4);
}

#[test]
fn a_bad_topology_value_the_vehicle_overrides_is_not_an_error() {
    let files = apply(&[
        Replace(TOPOLOGY, "shift_time: 0.3", "shift_time: -0.3"),
        Replace(
            VEHICLE,
            "reverse_ratios: [3.2]",
            "reverse_ratios: [3.2], shift_time: 0.2",
        ),
    ])
    .unwrap();
    parse(&files).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn malformed_files_are_refused_with_located_errors() {
    let cases = cases();
    assert!(cases.len() >= 25);
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(why) = check(case) {
            failures.push(format!("{}:\n      {why}", case.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Every one-character deletion, and the insertion of a few troublesome characters at every
/// place, in every file: never a panic, and every error names a position inside one of the
/// files.
#[test]
fn no_single_character_edit_panics() {
    let mut checked = 0;
    for (&name, text) in &base_files() {
        let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        for &at in &boundaries {
            let next = text[at..].chars().next().map_or(0, char::len_utf8);
            let mut variants = vec![format!("{}{}", &text[..at], &text[at + next..])];
            for insert in ["\"", "(", "]", ",", "-", "é"] {
                variants.push(format!("{}{insert}{}", &text[..at], &text[at..]));
            }
            for variant in variants {
                let mut files = base_files();
                files.insert(name, variant);
                let outcome = catch_unwind(AssertUnwindSafe(|| parse(&files)));
                let Ok(result) = outcome else {
                    panic!("panicked on this {name}:\n{}", files[name]);
                };
                if let Err(e) = result {
                    let file = e.file.to_str().unwrap_or_default();
                    let Some(text) = files.get(file) else {
                        panic!("{e}: not one of the files");
                    };
                    let lines = text.split('\n').count();
                    let line_len = text.split('\n').nth(e.line - 1).map(|l| l.chars().count());
                    assert!(
                        e.line >= 1
                            && e.line <= lines
                            && e.column >= 1
                            && line_len.is_some_and(|n| e.column <= n + 1),
                        "{e}: outside the file\n{text}"
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 1000);
}

/// A UTF-8 byte-order mark at the start of a file (some editors write one) is not part of its
/// text: the files read as without it, and an error after it is at the same line and column.
#[test]
fn a_byte_order_mark_is_ignored() {
    let mut files = base_files();
    for text in files.values_mut() {
        text.insert(0, '\u{feff}');
    }
    let with_mark = parse(&files).unwrap_or_else(|e| panic!("{e}"));
    let without = parse(&base_files()).unwrap();
    assert_eq!(with_mark.to_ron().unwrap(), without.to_ron().unwrap());

    let broken = |files: &mut BTreeMap<&'static str, String>| {
        let vehicle = files.get_mut(VEHICLE).unwrap();
        *vehicle = vehicle.replace("mass: 1200.0", "mass: -1200.0");
        parse(files).expect_err("a negative mass")
    };
    let mut plain = base_files();
    let expected = broken(&mut plain);
    assert_eq!((expected.line, expected.column), (6, 15), "{expected}");
    assert_eq!(broken(&mut files), expected);
}
