//! A human-readable dump of one instance: its state path per region, crossfade, players with
//! their weights, and its compiled pose program (`throng inspect --instance`), each op mapped
//! back to the region, state and producer node (with TOML lines) it came from, and the authored
//! producers this tick skipped because their states are inactive.

use std::fmt::Write;

use throng_cpu_ref::program::{op, NO_MASK};
use throng_cpu_ref::PoseOp;

use crate::instance::{Controller, InstanceState, Source, REST};
use crate::program::{compile_explained, NO_REGION};
use crate::tree::{Producer, Region};

/// The dump of `s` as text (one line per region, player and op).
pub fn dump(ctl: &Controller, s: &InstanceState) -> String {
    let mut out = String::new();
    let tree = &ctl.tree;
    let mut weights = vec![0.0; tree.player_slots()];
    let _ = writeln!(
        out,
        "instance {} of tree '{}' at tick {}",
        s.id, tree.name, s.tick
    );
    for (i, input) in tree.inputs.iter().enumerate() {
        let _ = writeln!(out, "  input {} = {:?}", input.name, s.inputs[i]);
    }
    for (r, (region, rs)) in tree.regions.iter().zip(&s.regions).enumerate() {
        let path: Vec<&str> = rs.path[..rs.depth as usize]
            .iter()
            .map(|&p| region.states[p as usize].name.as_str())
            .collect();
        let _ = writeln!(
            out,
            "region {r} '{}' ({:?}, weight {}): {}",
            region.name,
            region.blend,
            region.weight,
            path.join("/")
        );
        if r == 0 && s.inertia.active {
            let _ = writeln!(
                out,
                "  inertializing: history slot {}, {:.3}/{:.3} s{}",
                s.id,
                s.inertia.elapsed,
                s.inertia.duration,
                if s.inertia.capture.is_some() {
                    " (captured this tick)"
                } else {
                    ""
                }
            );
        }
        match rs.source {
            Source::None => {}
            Source::Live { state, .. } => {
                let _ = writeln!(
                    out,
                    "  fading from '{}': {:.3}/{:.3} s",
                    region.states[state as usize].name, rs.fade_elapsed, rs.fade_duration
                );
            }
            Source::Frozen { samples, len } => {
                let _ = writeln!(
                    out,
                    "  fading from a frozen pose: {:.3}/{:.3} s",
                    rs.fade_elapsed, rs.fade_duration
                );
                for x in &samples[..len as usize] {
                    let _ = writeln!(
                        out,
                        "    {} @ {:.4} s weight {:.4}",
                        clip_name(ctl, x.clip),
                        x.time,
                        x.weight
                    );
                }
            }
        }
        ctl.weigh(s, r, &mut weights);
        let offset = tree.player_offset(r);
        let slots = region.slots as usize;
        for (k, (p, &w)) in s
            .players
            .iter()
            .zip(&weights)
            .enumerate()
            .skip(offset)
            .take(2 * slots)
        {
            if w > 0.0
                || p.activation != 0
                    && (k - offset) / slots == rs.bank as usize
                    && (k - offset) % slots < rs.count as usize
            {
                let _ = writeln!(
                    out,
                    "  player {k}: {} @ {:.4} s cycle {} rate {} {:?} weight {:.4} activation {}",
                    clip_name(ctl, p.clip),
                    p.clip_time(),
                    p.position().cycle,
                    p.rate(),
                    p.mode(),
                    w,
                    p.activation
                );
            }
        }
    }
    let limits = ctl.limits();
    let mut ops = vec![PoseOp::rest(0); limits.max_ops];
    let mut pool = vec![0.0; limits.max_weights];
    let mut origins = vec![NO_REGION; limits.max_ops];
    let (n, m) = compile_explained(ctl, s, &mut weights, &mut ops, &mut pool, &mut origins);
    let _ = writeln!(
        out,
        "program: {n} ops, {m} weights (capacity {} ops, {} registers, {} weights)",
        limits.max_ops, limits.max_registers, limits.max_weights
    );
    for (i, (o, &r)) in ops[..n].iter().zip(&origins).enumerate() {
        let _ = writeln!(
            out,
            "  {i:>2} {:<48} <- {}",
            op_text(ctl, o, &pool[..m]),
            origin_text(ctl, s, r, o)
        );
    }
    for (r, region) in tree.regions.iter().enumerate() {
        let skipped: Vec<String> = region
            .states
            .iter()
            .enumerate()
            .filter(|(i, st)| st.producer != Producer::Empty && !playing(s, r, *i as u16))
            .map(|(_, st)| format!("'{}' (line {})", st.name, st.line))
            .collect();
        if !skipped.is_empty() {
            let _ = writeln!(
                out,
                "skipped in '{}' (inactive states): {}",
                region.name,
                skipped.join(", ")
            );
        }
    }
    out
}

/// Whether state `state` of region `r` has live players: the active leaf or a live fade source.
fn playing(s: &InstanceState, r: usize, state: u16) -> bool {
    let rs = &s.regions[r];
    rs.leaf() == state || matches!(rs.source, Source::Live { state: from, .. } if from == state)
}

/// Where op `o`, written for region `r` ([`NO_REGION`]: the instance), came from in the tree.
fn origin_text(ctl: &Controller, s: &InstanceState, r: u16, o: &PoseOp) -> String {
    let Some(region) = ctl.tree.regions.get(r as usize) else {
        return "the instance (after every region)".into();
    };
    let at = format!("region '{}' (line {})", region.name, region.line);
    if o.code != op::SAMPLE {
        return at;
    }
    match sample_source(ctl, s, r as usize, o) {
        Some(node) => format!("{at}, {node}"),
        None if r == 0 && s.inertia.capture.is_some() => {
            format!("{at}, the pose the inertialization captures")
        }
        None if o.time == 0.0 && region_plays(ctl, s, r as usize, o.a) => {
            format!(
                "{at}, the additive reference (first sample) of '{}'",
                clip_name(ctl, o.a)
            )
        }
        None => format!("{at}, the frozen pose of an interrupted fade"),
    }
}

/// The state and producer node of the live player sampled by `o` (same clip and clip time).
fn sample_source(ctl: &Controller, s: &InstanceState, r: usize, o: &PoseOp) -> Option<String> {
    let region = &ctl.tree.regions[r];
    let rs = &s.regions[r];
    let first = ctl.tree.player_offset(r);
    let slots = region.slots as usize;
    for ((b, count, state), fading) in rs.live_banks().into_iter().zip(["", " (fading out)"]) {
        for k in 0..count {
            let p = &s.players[first + b * slots + k];
            if p.clip == o.a && (p.clip_time() as f32).to_bits() == o.time.to_bits() {
                let st = &region.states[state as usize];
                return Some(format!(
                    "state '{}' (line {}){fading}, {}",
                    st.name,
                    st.line,
                    node_text(region, state, k)
                ));
            }
        }
    }
    None
}

/// Whether a live player of region `r` plays `clip`.
fn region_plays(ctl: &Controller, s: &InstanceState, r: usize, clip: u32) -> bool {
    let first = ctl.tree.player_offset(r);
    let slots = ctl.tree.regions[r].slots as usize;
    s.players[first..first + 2 * slots]
        .iter()
        .any(|p| p.activation != 0 && p.clip == clip)
}

/// Producer node `k` of `state` (its k-th clip).
fn node_text(region: &Region, state: u16, k: usize) -> String {
    match &region.states[state as usize].producer {
        Producer::Empty => "no producer".into(),
        Producer::Clip(_) => "its clip".into(),
        Producer::Matching(_) => "its matched clip".into(),
        Producer::Blend1d { at, .. } => format!("blend1d point {k} (at {})", at[k]),
        Producer::Blend2d { points, .. } => {
            format!("blend2d point {k} ({}, {})", points[k].x, points[k].y)
        }
    }
}

fn clip_name(ctl: &Controller, clip: u32) -> String {
    if clip == REST {
        return "rest".into();
    }
    ctl.package
        .clips
        .get(clip as usize)
        .map_or_else(|| format!("clip {clip}"), |c| c.name.clone())
}

fn mask_name(ctl: &Controller, mask: u32) -> String {
    if mask == NO_MASK {
        return "all joints".into();
    }
    ctl.package
        .masks
        .get(mask as usize)
        .map_or_else(|| format!("mask {mask}"), |m| format!("mask '{}'", m.name))
}

fn op_text(ctl: &Controller, o: &PoseOp, pool: &[f32]) -> String {
    match o.code {
        op::REST => format!("r{} = rest", o.dst),
        op::SAMPLE => format!(
            "r{} = sample '{}' @ {:.4} s",
            o.dst,
            clip_name(ctl, o.a),
            o.time
        ),
        op::BLEND => {
            let w = pool.get(o.c as usize..(o.c + o.b) as usize).unwrap_or(&[]);
            format!(
                "r{} = blend r{}..r{} weights {:?}",
                o.dst,
                o.a,
                o.a + o.b,
                w
            )
        }
        op::OVERRIDE => format!(
            "r{} = override toward r{} by {:.4} under {}",
            o.dst,
            o.a,
            o.weight,
            mask_name(ctl, o.c)
        ),
        op::ADDITIVE => format!(
            "r{} += r{} relative to r{} by {:.4} under {}",
            o.dst,
            o.a,
            o.b,
            o.weight,
            mask_name(ctl, o.c)
        ),
        op::TO_COMPONENT => format!("component = fk(r{})", o.a),
        op::PALETTE => format!("palette of skin {}", o.a),
        op::CAPTURE => format!(
            "history slot {} = offset of r{} from r{}, velocity from r{} and r{} over {:.4} s",
            o.c, o.a, o.dst, o.b, o.d, o.weight
        ),
        op::INERTIALIZE => format!(
            "r{} += history slot {} decayed {:.4}/{:.4} s",
            o.dst, o.c, o.time, o.weight
        ),
        code => format!("op {code}"),
    }
}
