//! State tree loading: the crowd tree, and each load error named by file, line and key.

mod support;

use throng_control::tree::{self, LayerBlend, Producer, TreeErrorKind};

const BASE: &str = r#"version = 1

[inputs.speed]
type = "float"

[inputs.on]
type = "bool"

[[regions]]
name = "main"
initial = "a"

[[regions.states]]
name = "a"
clip = "c1"

[[regions.states]]
name = "b"
clip = "c2"

[[regions.transitions]]
id = "a_b"
from = "a"
to = "b"
when = [{ input = "speed", op = ">", value = 1.0 }]

[[regions.transitions]]
id = "b_a"
from = "b"
to = "a"
when = [{ input = "speed", op = "<=", value = 1.0 }]
"#;

fn package() -> throng_cpu_ref::Package {
    support::package(vec![
        support::clip("c1", 1.0, &[], &[]),
        support::clip("c2", 1.0, &[], &[]),
    ])
}

fn load(text: &str) -> Result<tree::Tree, tree::TreeError> {
    tree::load(text, "t.toml", &package(), 0)
}

/// Loads `text` expecting an error; checks its line and key and returns its kind.
fn error(text: &str, line: usize, key: &str) -> TreeErrorKind {
    let e = load(text).expect_err("load should fail");
    let shown = e.to_string();
    let prefix = match key {
        "" => format!("t.toml:{line}: "),
        key => format!("t.toml:{line}: {key}: "),
    };
    assert!(shown.starts_with(&prefix), "{shown}");
    assert_eq!((e.line, e.key.as_str()), (line, key), "{shown}");
    e.kind
}

fn line_of(text: &str, needle: &str) -> usize {
    line_of_nth(text, needle, 0)
}

/// The line of the `n`-th (from 0) line of `text` that contains `needle`.
fn line_of_nth(text: &str, needle: &str, n: usize) -> usize {
    let mut found = text.lines().enumerate().filter(|(_, l)| l.contains(needle));
    found.nth(n).unwrap().0 + 1
}

#[test]
fn the_crowd_tree_loads_on_the_generated_character() {
    let ctl = support::crowd(60.0);
    let t = &ctl.tree;
    assert_eq!(t.regions.len(), 3);
    assert_eq!(
        t.regions.iter().map(|r| r.blend).collect::<Vec<_>>(),
        [LayerBlend::Base, LayerBlend::Override, LayerBlend::Additive]
    );
    let Producer::Blend1d { at, clips, .. } = &t.regions[0].states[0].producer else {
        panic!("locomotion is a 1-D blend space")
    };
    assert_eq!(at, &[0.0, 1.4, 3.5]);
    let names: Vec<&str> = clips
        .iter()
        .map(|&c| ctl.package.clips[c as usize].name.as_str())
        .collect();
    assert_eq!(names, ["idle", "walk", "run"]);
    // The mask covers the right arm from the clavicle down and nothing else.
    let skeleton = &ctl.package.skeletons[0];
    let clavicle = skeleton.find("clavicle_r").unwrap();
    let mask = &t.masks[0].weights;
    for (j, &w) in mask.iter().enumerate() {
        let inside = (clavicle..skeleton.subtree_end[clavicle] as usize).contains(&j);
        assert_eq!(
            w,
            if inside { 1.0 } else { 0.0 },
            "joint {}",
            skeleton.names[j]
        );
    }
    assert_eq!(t.sync_groups, ["feet"]);
}

#[test]
fn the_base_tree_loads() {
    let t = load(BASE).unwrap();
    let region = &t.regions[0];
    assert_eq!(region.transitions.len(), 2);
    assert_eq!(region.states[0].transitions, [0]);
}

#[test]
fn an_unknown_clip_names_its_line_and_key() {
    let text = BASE.replace("clip = \"c2\"", "clip = \"nope\"");
    let kind = error(&text, line_of(&text, "nope"), "regions[0].states[1].clip");
    assert_eq!(kind, TreeErrorKind::UnknownClip("nope".into()));
}

#[test]
fn an_unreachable_state_is_rejected() {
    let text = format!("{BASE}\n[[regions.states]]\nname = \"island\"\nclip = \"c1\"\n");
    let kind = error(&text, line_of(&text, "island"), "regions[0].states[2].name");
    assert_eq!(kind, TreeErrorKind::Unreachable("island".into()));
}

#[test]
fn conflicting_priorities_are_rejected() {
    let text = format!("{BASE}\n[[regions.transitions]]\nid = \"a_b_too\"\nfrom = \"a\"\nto = \"b\"\npriority = 0\nwhen = [{{ input = \"speed\", op = \">\", value = 2.0 }}]\n");
    let kind = error(
        &text,
        line_of(&text, "priority = 0"),
        "regions[0].transitions[2].priority",
    );
    let expected = TreeErrorKind::ConflictingPriority {
        transitions: "'a_b' and 'a_b_too'".into(),
        state: "a".into(),
        priority: 0,
    };
    assert_eq!(kind, expected);
    // A different priority is fine.
    load(&text.replace("priority = 0", "priority = 1")).unwrap();
}

#[test]
fn zero_time_cycles_are_rejected_but_exclusive_predicates_are_not() {
    // speed > 1 and speed <= 1 never hold together: the base tree is fine (loaded above).
    let text = BASE.replace("op = \"<=\", value = 1.0", "op = \">=\", value = 2.0");
    let kind = error(
        &text,
        line_of(&text, "id = \"a_b\""),
        "regions[0].transitions[0]",
    );
    assert_eq!(
        kind,
        TreeErrorKind::ZeroTimeCycle("transitions a_b -> b_a".into())
    );
    // Waiting on elapsed time breaks the cycle.
    let timed = text.replace(
        "op = \">=\", value = 2.0 }]",
        "op = \">=\", value = 2.0 }, { elapsed = \">=\", value = 0.5 }]",
    );
    load(&timed).unwrap();
    // An unconditional self-transition is the shortest zero-time cycle.
    let selfie = format!(
        "{BASE}\n[[regions.transitions]]\nid = \"again\"\nfrom = \"a\"\nto = \"a\"\npriority = 3\n"
    );
    let kind = error(
        &selfie,
        line_of(&selfie, "id = \"again\""),
        "regions[0].transitions[2]",
    );
    assert_eq!(
        kind,
        TreeErrorKind::ZeroTimeCycle("transitions again".into())
    );
}

#[test]
fn a_mask_naming_an_unknown_joint_is_rejected() {
    let text = BASE.replace(
        "[[regions]]",
        "[masks.arm]\njoints = [\"root\", \"no_such_joint\"]\n\n[[regions]]",
    );
    let kind = error(
        &text,
        line_of(&text, "no_such_joint"),
        "masks.arm.joints[1]",
    );
    assert_eq!(kind, TreeErrorKind::UnknownJoint("no_such_joint".into()));
}

#[test]
fn sockets_load_sorted_by_name_and_bad_joints_or_offsets_are_rejected() {
    let sockets = "[sockets.tip]\njoint = \"root\"\noffset = [0.0, 0.5, -1.0]\n\n[sockets.base]\njoint = \"root\"\n\n[[regions]]";
    let tree = load(&BASE.replace("[[regions]]", sockets)).unwrap();
    let names: Vec<_> = tree
        .sockets
        .iter()
        .map(|s| (s.name.as_str(), s.offset.y))
        .collect();
    assert_eq!(names, [("base", 0.0), ("tip", 0.5)]);
    let text = BASE.replace(
        "[[regions]]",
        "[sockets.hand]\njoint = \"no_such_joint\"\n\n[[regions]]",
    );
    let kind = error(&text, line_of(&text, "no_such_joint"), "sockets.hand.joint");
    assert_eq!(kind, TreeErrorKind::UnknownJoint("no_such_joint".into()));
    let text = BASE.replace(
        "[[regions]]",
        "[sockets.hand]\njoint = \"root\"\noffset = [0.0, inf, 0.0]\n\n[[regions]]",
    );
    let kind = error(&text, line_of(&text, "inf"), "sockets.hand.offset");
    assert!(matches!(kind, TreeErrorKind::Invalid(_)), "{kind:?}");
}

#[test]
fn unknown_inputs_wrong_types_versions_and_syntax_are_rejected() {
    let text = BASE.replace(
        "input = \"speed\", op = \">\"",
        "input = \"sped\", op = \">\"",
    );
    assert_eq!(
        error(
            &text,
            line_of(&text, "sped"),
            "regions[0].transitions[0].when[0].input"
        ),
        TreeErrorKind::UnknownInput("sped".into())
    );
    let text = BASE.replace("op = \">\", value = 1.0", "op = \">\", value = true");
    let kind = error(
        &text,
        line_of(&text, "value = true"),
        "regions[0].transitions[0].when[0].value",
    );
    assert!(
        matches!(kind, TreeErrorKind::Invalid(ref m) if m.contains("float")),
        "{kind:?}"
    );
    let text = BASE.replace("version = 1", "version = 2");
    assert_eq!(error(&text, 1, "version"), TreeErrorKind::Version(2));
    let text = BASE.replace("name = \"b\"", "name = \"b\"\ncolour = \"red\"");
    let kind = error(&text, line_of(&text, "colour"), "");
    assert!(
        matches!(kind, TreeErrorKind::Syntax(ref m) if m.contains("colour")),
        "{kind:?}"
    );
}

/// `version = 1`, a float input `speed` and then `regions`.
fn with_regions(regions: &str) -> String {
    format!("version = 1\n\n[inputs.speed]\ntype = \"float\"\n\n{regions}")
}

/// An override region `name` with one state that plays nothing.
fn overlay(name: &str) -> String {
    format!(
        "\n[[regions]]\nname = \"{name}\"\nblend = \"override\"\ninitial = \"rest\"\n\n[[regions.states]]\nname = \"rest\"\n"
    )
}

#[test]
fn a_tree_of_nine_or_ten_regions_is_refused_naming_the_regions_key() {
    let regions = |n: usize| {
        let overlays: String = (1..n).map(|i| overlay(&format!("r{i}"))).collect();
        format!("{BASE}{overlays}")
    };
    let eight = load(&regions(8)).expect("eight regions are the most, and allowed");
    assert_eq!(eight.regions.len(), 8);
    for n in [9, 10] {
        let text = regions(n);
        assert_eq!(
            error(&text, line_of_nth(&text, "[[regions]]", 8), "regions"),
            TreeErrorKind::Invalid("a tree has 1 to 8 regions".into()),
            "{n} regions"
        );
    }
}

#[test]
fn a_tree_with_an_empty_regions_list_is_refused_naming_the_regions_key() {
    let text = "version = 1\nregions = []\n";
    assert_eq!(
        error(text, 2, "regions"),
        TreeErrorKind::Invalid("a tree has 1 to 8 regions".into())
    );
}

#[test]
fn a_blend_space_of_seventeen_points_is_refused_and_sixteen_are_accepted() {
    let space = |n: usize| {
        let points: Vec<String> = (0..n)
            .map(|i| format!("{{ clip = \"c{}\", at = {i}.0 }}", 1 + i % 2))
            .collect();
        with_regions(&format!(
            "[[regions]]\nname = \"main\"\ninitial = \"move\"\n\n[[regions.states]]\nname = \"move\"\n\n[regions.states.blend1d]\ninput = \"speed\"\npoints = [{}]\n",
            points.join(", ")
        ))
    };
    let sixteen = load(&space(16)).expect("sixteen points are the most, and allowed");
    let Producer::Blend1d { at, .. } = &sixteen.regions[0].states[0].producer else {
        panic!("a 1-D blend space")
    };
    assert_eq!(at.len(), 16);
    let text = space(17);
    assert_eq!(
        error(
            &text,
            line_of(&text, "[[regions.states]]"),
            "regions[0].states[0]"
        ),
        TreeErrorKind::Invalid("a blend space has at most 16 points".into())
    );
}

/// One region whose state `s0` (the initial one) has an unguarded transition to each of
/// `s1 .. s{n-1}`; state `i` plays `c1` in sync group `g{i}`.
fn synced_states(n: usize) -> String {
    let mut text = String::from("[[regions]]\nname = \"main\"\ninitial = \"s0\"\n");
    for i in 0..n {
        text += &format!("\n[[regions.states]]\nname = \"s{i}\"\nclip = \"c1\"\nsync = \"g{i}\"\n");
    }
    for i in 1..n {
        text += &format!(
            "\n[[regions.transitions]]\nid = \"to_s{i}\"\nfrom = \"s0\"\nto = \"s{i}\"\npriority = {i}\n"
        );
    }
    with_regions(&text)
}

#[test]
fn a_ninth_sync_group_is_refused_naming_its_state_and_eight_are_accepted() {
    let eight = load(&synced_states(8)).expect("eight sync groups are the most, and allowed");
    assert_eq!(eight.sync_groups.len(), 8);
    let text = synced_states(9);
    assert_eq!(
        error(
            &text,
            line_of(&text, "sync = \"g8\""),
            "regions[0].states[8].sync"
        ),
        TreeErrorKind::Invalid("a tree has at most 8 sync groups".into())
    );
}

/// One region of `n` nested states: `s{i+1}` is the child (and initial child) of `s{i}`, and the
/// innermost plays `c1`.
fn nested_states(n: usize) -> String {
    let mut text = String::from("[[regions]]\nname = \"main\"\ninitial = \"s0\"\n");
    for i in 0..n {
        text += &format!("\n[[regions.states]]\nname = \"s{i}\"\n");
        if i > 0 {
            text += &format!("parent = \"s{}\"\n", i - 1);
        }
        if i + 1 < n {
            text += &format!("initial = \"s{}\"\n", i + 1);
        } else {
            text += "clip = \"c1\"\n";
        }
    }
    with_regions(&text)
}

#[test]
fn a_parent_chain_of_nine_states_is_refused_and_eight_are_accepted() {
    let eight = load(&nested_states(8)).expect("a chain of eight states is allowed");
    assert_eq!(eight.regions[0].states[7].depth, 7);
    let text = nested_states(9);
    assert_eq!(
        error(
            &text,
            line_of(&text, "name = \"s8\"") - 1,
            "regions[0].states[8].parent"
        ),
        TreeErrorKind::Invalid("the parent chain loops or is deeper than 8".into())
    );
}

#[test]
fn a_parent_loop_is_refused_with_the_depth_message() {
    let text = with_regions(
        "[[regions]]\nname = \"main\"\ninitial = \"a\"\n\n[[regions.states]]\nname = \"a\"\nparent = \"b\"\ninitial = \"b\"\n\n[[regions.states]]\nname = \"b\"\nparent = \"a\"\ninitial = \"a\"\n",
    );
    assert_eq!(
        error(
            &text,
            line_of(&text, "name = \"a\"") - 1,
            "regions[0].states[0].parent"
        ),
        TreeErrorKind::Invalid("the parent chain loops or is deeper than 8".into())
    );
}

#[test]
fn a_region_with_no_states_is_refused_naming_its_states_key() {
    let text = with_regions("[[regions]]\nname = \"main\"\ninitial = \"a\"\nstates = []\n");
    assert_eq!(
        error(&text, line_of(&text, "states = []"), "regions[0].states"),
        TreeErrorKind::Invalid("a region has 1 to 1024 states".into())
    );
}

/// A region of `n` states `s0..`, each entered from the one before.
fn chain_of_states(n: usize) -> String {
    let mut text = String::from("[[regions]]\nname = \"main\"\ninitial = \"s0\"\n");
    for i in 0..n {
        text += &format!("\n[[regions.states]]\nname = \"s{i}\"\nclip = \"c1\"\n");
    }
    for i in 1..n {
        text += &format!(
            "\n[[regions.transitions]]\nid = \"t{i}\"\nfrom = \"s{}\"\nto = \"s{i}\"\nwhen = [{{ input = \"speed\", op = \">\", value = 1.0 }}]\n",
            i - 1
        );
    }
    with_regions(&text)
}

#[test]
fn a_region_of_1025_states_is_refused_at_the_1025th_and_1024_are_accepted() {
    let most = load(&chain_of_states(1024)).expect("1024 states are the most, and allowed");
    assert_eq!(most.regions[0].states.len(), 1024);
    let text = chain_of_states(1025);
    assert_eq!(
        error(
            &text,
            line_of(&text, "name = \"s1024\"") - 1,
            "regions[0].states"
        ),
        TreeErrorKind::Invalid("a region has 1 to 1024 states".into())
    );
}

/// A region whose `n` transitions all lead from `a` to `b`, each with its own priority.
fn fan_of_transitions(n: usize) -> String {
    let mut text = String::from(
        "[[regions]]\nname = \"main\"\ninitial = \"a\"\n\n[[regions.states]]\nname = \"a\"\nclip = \"c1\"\n\n[[regions.states]]\nname = \"b\"\nclip = \"c2\"\n",
    );
    for i in 0..n {
        text += &format!(
            "\n[[regions.transitions]]\nid = \"t{i}\"\nfrom = \"a\"\nto = \"b\"\npriority = {i}\nwhen = [{{ input = \"speed\", op = \">\", value = 1.0 }}]\n"
        );
    }
    with_regions(&text)
}

#[test]
fn a_region_of_4097_transitions_is_refused_at_the_4097th_and_4096_are_accepted() {
    let most = load(&fan_of_transitions(4096)).expect("4096 transitions are the most, and allowed");
    assert_eq!(most.regions[0].transitions.len(), 4096);
    let text = fan_of_transitions(4097);
    assert_eq!(
        error(
            &text,
            line_of(&text, "id = \"t4096\"") - 1,
            "regions[0].transitions"
        ),
        TreeErrorKind::Invalid("a region has at most 4096 transitions".into())
    );
}

#[test]
fn a_tree_of_257_inputs_is_refused_at_the_257th_and_256_are_accepted() {
    // BASE declares `on` and `speed`; the extra inputs sort after them as `x000`...
    let inputs = |extra: usize| {
        let declared: String = (0..extra)
            .map(|i| format!("[inputs.x{i:03}]\ntype = \"float\"\n\n"))
            .collect();
        BASE.replacen("[[regions]]", &format!("{declared}[[regions]]"), 1)
    };
    let most = load(&inputs(254)).expect("256 inputs are the most, and allowed");
    assert_eq!(most.inputs.len(), 256);
    let text = inputs(255);
    assert_eq!(
        error(&text, line_of(&text, "[inputs.x254]"), "inputs.x254"),
        TreeErrorKind::Invalid("a tree declares at most 256 inputs".into())
    );
}

/// A region of `n` states where every state enters every later one while `speed > 1` and every
/// earlier one while `speed < 0`, all without time passing: one strongly connected component
/// whose cycles all contradict themselves, and about 2^(n-1) paths to rule out.
fn contradicting_cycles(n: usize) -> String {
    let mut text = String::from("[[regions]]\nname = \"main\"\ninitial = \"s0\"\n");
    for i in 0..n {
        text += &format!("\n[[regions.states]]\nname = \"s{i}\"\nclip = \"c1\"\n");
    }
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            let when = if j > i {
                "\">\", value = 1.0"
            } else {
                "\"<\", value = 0.0"
            };
            text += &format!(
                "\n[[regions.transitions]]\nid = \"t{i}_{j}\"\nfrom = \"s{i}\"\nto = \"s{j}\"\npriority = {j}\nwhen = [{{ input = \"speed\", op = {when} }}]\n"
            );
        }
    }
    with_regions(&text)
}

#[test]
fn a_zero_time_cycle_search_past_its_budget_is_refused_naming_the_transitions_and_a_small_one_loads(
) {
    let small = load(&contradicting_cycles(8)).expect("8 states: every cycle is ruled out");
    assert_eq!(small.regions[0].transitions.len(), 56);
    let text = contradicting_cycles(24);
    assert_eq!(
        error(
            &text,
            line_of(&text, "[[regions]]"),
            "regions[0].transitions"
        ),
        TreeErrorKind::Invalid("too many transition paths to check for zero-time cycles".into())
    );
}
