//! Parsing, binding and checking a state tree (docs/state-tree.md).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use glam::DVec2;
use throng_cpu_ref::inertialize::MAX_INERTIALIZATION;
use throng_cpu_ref::motion_db::tag;
use throng_cpu_ref::{CurveSelection, LoopPolicy, Mask, Package};

use super::doc::{ClauseDoc, Doc, MatchingDoc, RegionDoc, StateDoc, TransitionDoc, S};
use super::{
    check, Clause, Cmp, CurveEvent, InputDef, InputType, LayerBlend, Matching, Producer, Region,
    RootMotionUse, Socket, State, Transition, TransitionBlend, Tree, TreeError, TreeErrorKind,
    Value, FORMAT_VERSION, MAX_DEPTH, MAX_INPUTS, MAX_POINTS, MAX_REGIONS, MAX_STATES,
    MAX_SYNC_GROUPS, MAX_TRANSITIONS,
};
use crate::blend::triangulate;
use crate::player::PlayMode;

/// Ticks between motion-matching queries when a state does not say (0.2 s at 30 Hz).
const DEFAULT_EVERY: u32 = 6;

/// Where errors point: the file name and its text (for byte offset → line).
pub(super) struct Ctx<'a> {
    pub file: &'a str,
    pub source: &'a str,
}

impl Ctx<'_> {
    pub fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.source.len());
        self.source.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    pub fn err(
        &self,
        span: Range<usize>,
        key: impl Into<String>,
        kind: TreeErrorKind,
    ) -> TreeError {
        TreeError {
            file: self.file.to_owned(),
            line: self.line(span.start),
            key: key.into(),
            kind,
        }
    }

    fn invalid(
        &self,
        span: Range<usize>,
        key: impl Into<String>,
        what: impl Into<String>,
    ) -> TreeError {
        self.err(span, key, TreeErrorKind::Invalid(what.into()))
    }
}

/// Parses `source` (the text of `file`), binds its clip and joint names to skeleton `skeleton`
/// of `package`, and checks it: unknown clips, states, inputs, masks and joints, duplicate names,
/// typed predicates, unreachable states, conflicting priorities and zero-time cycles. Every
/// error names the file, the line and the key.
pub fn load(source: &str, file: &str, package: &Package, skeleton: u32) -> Result<Tree, TreeError> {
    let ctx = Ctx { file, source };
    let doc: Doc = toml::from_str(source).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        ctx.err(
            span,
            "",
            TreeErrorKind::Syntax(e.message().trim().to_owned()),
        )
    })?;
    if *doc.version.get_ref() != FORMAT_VERSION {
        return Err(ctx.err(
            doc.version.span(),
            "version",
            TreeErrorKind::Version(*doc.version.get_ref()),
        ));
    }
    let rig = package
        .skeletons
        .get(skeleton as usize)
        .ok_or_else(|| ctx.invalid(0..0, "", format!("the package has no skeleton {skeleton}")))?;
    counts(&ctx, &doc)?;
    let inputs = inputs(&ctx, &doc)?;
    let masks = masks(&ctx, &doc, skeleton, rig)?;
    let sockets = sockets(&ctx, &doc, rig)?;
    let (curve_events, watched_curves) = curve_events(&ctx, &doc, package, skeleton)?;
    let curve_selections = curve_selections(&ctx, &doc, package, skeleton)?;
    let selection_base = package.curves.selections.len() as u32;
    let mask_base = package.masks.len() as u32;
    let binder = Binder {
        ctx: &ctx,
        package,
        skeleton,
        inputs: &inputs,
        masks: &masks,
        mask_base,
        selections: &curve_selections,
        selection_base,
    };
    let mut sync_groups = Vec::new();
    let mut regions = Vec::new();
    let mut ids = BTreeSet::new();
    let mut names = BTreeSet::new();
    for (r, region) in doc.regions.get_ref().iter().enumerate() {
        let key = format!("regions[{r}]");
        if !names.insert(region.get_ref().name.get_ref().clone()) {
            let name = &region.get_ref().name;
            return Err(ctx.err(
                name.span(),
                format!("{key}.name"),
                TreeErrorKind::Duplicate(name.get_ref().clone()),
            ));
        }
        let built = binder.region(&key, r, region, &mut sync_groups, &mut ids)?;
        regions.push(built);
    }
    let tree = Tree {
        name: doc.name.clone().unwrap_or_else(|| file.to_owned()),
        file: file.to_owned(),
        skeleton,
        inputs,
        masks,
        mask_base,
        regions,
        sync_groups,
        sockets,
        curve_events,
        watched_curves,
        curve_selections,
        selection_base,
    };
    for (r, region) in doc.regions.get_ref().iter().enumerate() {
        check::region(&ctx, &tree, r, region)?;
    }
    Ok(tree)
}

/// Checks the counts of regions, inputs, states and transitions before anything is bound. An
/// error points at the first item past the bound, or at the empty list.
fn counts(ctx: &Ctx, doc: &Doc) -> Result<(), TreeError> {
    let regions = doc.regions.get_ref();
    if regions.is_empty() || regions.len() > MAX_REGIONS {
        let span = regions
            .get(MAX_REGIONS)
            .map_or(doc.regions.span(), |r| r.span());
        let what = format!("a tree has 1 to {MAX_REGIONS} regions");
        return Err(ctx.invalid(span, "regions", what));
    }
    if let Some((name, input)) = doc.inputs.iter().nth(MAX_INPUTS) {
        let what = format!("a tree declares at most {MAX_INPUTS} inputs");
        return Err(ctx.invalid(input.span(), format!("inputs.{name}"), what));
    }
    for (r, region) in regions.iter().enumerate() {
        let d = region.get_ref();
        let states = d.states.get_ref();
        if states.is_empty() || states.len() > MAX_STATES {
            let span = states.get(MAX_STATES).map_or(d.states.span(), |s| s.span());
            let what = format!("a region has 1 to {MAX_STATES} states");
            return Err(ctx.invalid(span, format!("regions[{r}].states"), what));
        }
        if let Some(t) = d.transitions.get(MAX_TRANSITIONS) {
            let what = format!("a region has at most {MAX_TRANSITIONS} transitions");
            return Err(ctx.invalid(t.span(), format!("regions[{r}].transitions"), what));
        }
    }
    Ok(())
}

fn inputs(ctx: &Ctx, doc: &Doc) -> Result<Vec<InputDef>, TreeError> {
    let mut out = Vec::new();
    for (name, input) in &doc.inputs {
        let key = format!("inputs.{name}");
        let i = input.get_ref();
        let ty = match i.ty.get_ref().as_str() {
            "bool" => InputType::Bool,
            "int" => InputType::Int,
            "float" => InputType::Float,
            other => {
                return Err(ctx.invalid(
                    i.ty.span(),
                    format!("{key}.type"),
                    format!("type '{other}' is not bool, int or float"),
                ))
            }
        };
        let bound = |b: &Option<S<f64>>, which: &str, fallback: f64| -> Result<f64, TreeError> {
            match b {
                None => Ok(fallback),
                Some(_) if ty == InputType::Bool => Err(ctx.invalid(
                    input.span(),
                    format!("{key}.{which}"),
                    "a bool input has no range",
                )),
                Some(v) if v.get_ref().is_nan() => {
                    Err(ctx.invalid(v.span(), format!("{key}.{which}"), "NaN bound"))
                }
                Some(v) => Ok(*v.get_ref()),
            }
        };
        let min = bound(&i.min, "min", f64::NEG_INFINITY)?;
        let max = bound(&i.max, "max", f64::INFINITY)?;
        if min > max {
            return Err(ctx.invalid(input.span(), key, format!("min {min} is above max {max}")));
        }
        let default = match &i.default {
            None => match ty {
                InputType::Bool => Value::Bool(false),
                InputType::Int => Value::Int(0.0f64.clamp(min, max) as i64),
                InputType::Float => Value::Float(0.0f64.clamp(min, max)),
            },
            Some(v) => {
                let value = typed(ctx, v, ty, &format!("{key}.default"))?;
                if !(min..=max).contains(&value.as_f64()) {
                    return Err(ctx.invalid(
                        v.span(),
                        format!("{key}.default"),
                        "default outside [min, max]",
                    ));
                }
                value
            }
        };
        out.push(InputDef {
            name: name.clone(),
            ty,
            default,
            min,
            max,
        });
    }
    Ok(out)
}

/// A TOML value as a typed input value: bools for bool inputs, integers for int inputs, finite
/// floats or integers for float inputs.
fn typed(ctx: &Ctx, v: &S<toml::Value>, ty: InputType, key: &str) -> Result<Value, TreeError> {
    let value = match (ty, v.get_ref()) {
        (InputType::Bool, toml::Value::Boolean(b)) => Value::Bool(*b),
        (InputType::Int, toml::Value::Integer(i)) => Value::Int(*i),
        (InputType::Float, toml::Value::Float(f)) if f.is_finite() => Value::Float(*f),
        (InputType::Float, toml::Value::Integer(i)) => Value::Float(*i as f64),
        (ty, other) => {
            let what = format!("expected a finite {ty:?} value, found {}", other);
            return Err(ctx.invalid(v.span(), key, what.to_lowercase()));
        }
    };
    Ok(value)
}

fn sockets(ctx: &Ctx, doc: &Doc, rig: &throng_cpu_ref::Skeleton) -> Result<Vec<Socket>, TreeError> {
    let mut out = Vec::new();
    for (name, socket) in &doc.sockets {
        let key = format!("sockets.{name}");
        let d = socket.get_ref();
        let joint = rig.find(d.joint.get_ref()).ok_or_else(|| {
            ctx.err(
                d.joint.span(),
                format!("{key}.joint"),
                TreeErrorKind::UnknownJoint(d.joint.get_ref().clone()),
            )
        })?;
        let offset = d.offset.as_ref().map_or([0.0; 3], |o| *o.get_ref());
        if offset.iter().any(|v| !v.is_finite()) {
            let span = d.offset.as_ref().map_or(socket.span(), |o| o.span());
            return Err(ctx.invalid(span, format!("{key}.offset"), "not finite"));
        }
        out.push(Socket {
            name: name.clone(),
            joint: joint as u32,
            offset: glam::DVec3::from_array(offset).as_vec3(),
        });
    }
    Ok(out)
}

/// `[curve_events.NAME]`: each names a curve the package has on the skeleton and exactly one
/// finite threshold (`above` or `below`). Also the watched channels, ascending.
fn curve_events(
    ctx: &Ctx,
    doc: &Doc,
    package: &Package,
    skeleton: u32,
) -> Result<(Vec<CurveEvent>, Vec<u32>), TreeError> {
    let mut events = Vec::new();
    for (name, e) in &doc.curve_events {
        let key = format!("curve_events.{name}");
        let d = e.get_ref();
        let curve = d.curve.get_ref();
        let channel = package.curves.find(skeleton, curve).ok_or_else(|| {
            ctx.err(
                d.curve.span(),
                format!("{key}.curve"),
                TreeErrorKind::UnknownCurve {
                    curve: curve.clone(),
                    known: known_curves(package, skeleton),
                },
            )
        })?;
        let (threshold, rising) =
            match (&d.above, &d.below) {
                (Some(t), None) => (t, true),
                (None, Some(t)) => (t, false),
                _ => return Err(ctx.invalid(
                    e.span(),
                    key,
                    "give exactly one of `above` (a rising crossing) or `below` (a falling one)",
                )),
            };
        if !threshold.get_ref().is_finite() {
            return Err(ctx.invalid(threshold.span(), key, "the threshold is not finite"));
        }
        events.push(CurveEvent {
            name: name.clone(),
            channel,
            slot: 0,
            threshold: *threshold.get_ref() as f32,
            rising,
        });
    }
    let mut watched: Vec<u32> = events.iter().map(|e| e.channel).collect();
    watched.sort_unstable();
    watched.dedup();
    for e in &mut events {
        e.slot = watched.partition_point(|&c| c < e.channel) as u32;
    }
    Ok((events, watched))
}

/// The package index (`base` + position among `names`) of the mask or curve selection a layer's
/// key names; an error for the base region or an unknown name.
fn layer_ref<'a>(
    ctx: &Ctx,
    (span, key, base_region): (Range<usize>, String, bool),
    given: Option<&S<String>>,
    names: impl Iterator<Item = &'a str>,
    (base, what, unknown): (u32, &str, fn(String) -> TreeErrorKind),
) -> Result<Option<u32>, TreeError> {
    let Some(name) = given else {
        return Ok(None);
    };
    if base_region {
        return Err(ctx.invalid(span, key, format!("the base region takes no {what}")));
    }
    let mut names = names;
    let k = names
        .position(|n| n == name.get_ref())
        .ok_or_else(|| ctx.err(name.span(), key, unknown(name.get_ref().clone())))?;
    Ok(Some(k as u32 + base))
}

/// `[curve_selections.NAME]`: a weight in [0, 1] per named curve of the skeleton (others 0).
fn curve_selections(
    ctx: &Ctx,
    doc: &Doc,
    package: &Package,
    skeleton: u32,
) -> Result<Vec<CurveSelection>, TreeError> {
    let range = package.curves.range(skeleton);
    let mut out = Vec::new();
    for (name, selection) in &doc.curve_selections {
        let key = format!("curve_selections.{name}");
        let mut weights = vec![0.0f32; range.len()];
        for (curve, w) in &selection.get_ref().curves {
            let id = package.curves.find(skeleton, curve).ok_or_else(|| {
                ctx.err(
                    w.span(),
                    format!("{key}.curves"),
                    TreeErrorKind::UnknownCurve {
                        curve: curve.clone(),
                        known: known_curves(package, skeleton),
                    },
                )
            })?;
            if !(0.0..=1.0).contains(w.get_ref()) {
                return Err(ctx.invalid(
                    w.span(),
                    format!("{key}.curves"),
                    "weight outside [0, 1]",
                ));
            }
            weights[id as usize - range.start] = *w.get_ref() as f32;
        }
        out.push(CurveSelection {
            name: name.clone(),
            skeleton,
            weights,
        });
    }
    Ok(out)
}

/// The names of `skeleton`'s curves, for an error ("none" without any).
fn known_curves(package: &Package, skeleton: u32) -> String {
    let known: Vec<&str> = package.curves.channels[package.curves.range(skeleton)]
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    if known.is_empty() {
        "none".into()
    } else {
        known.join(", ")
    }
}

fn masks(
    ctx: &Ctx,
    doc: &Doc,
    skeleton: u32,
    rig: &throng_cpu_ref::Skeleton,
) -> Result<Vec<Mask>, TreeError> {
    let mut out = Vec::new();
    for (name, mask) in &doc.masks {
        let key = format!("masks.{name}");
        let m = mask.get_ref();
        let weight = m.weight.as_ref().map_or(1.0, |w| *w.get_ref());
        if !(0.0..=1.0).contains(&weight) {
            let span = m.weight.as_ref().map_or(mask.span(), |w| w.span());
            return Err(ctx.invalid(span, format!("{key}.weight"), "weight outside [0, 1]"));
        }
        let mut weights = vec![0.0f32; rig.joint_count()];
        for (list, value, field) in [
            (&m.joints, weight as f32, "joints"),
            (&m.exclude, 0.0, "exclude"),
        ] {
            for (k, joint) in list.iter().enumerate() {
                let j = rig.find(joint.get_ref()).ok_or_else(|| {
                    ctx.err(
                        joint.span(),
                        format!("{key}.{field}[{k}]"),
                        TreeErrorKind::UnknownJoint(joint.get_ref().clone()),
                    )
                })?;
                let end = rig.subtree_end[j] as usize;
                weights[j..end].iter_mut().for_each(|w| *w = value);
            }
        }
        out.push(Mask {
            name: name.clone(),
            skeleton,
            weights,
        });
    }
    Ok(out)
}

/// Resolves a state name of the region being bound, or names the key it came from.
type FindState<'a> = dyn Fn(&S<String>, String) -> Result<u16, TreeError> + 'a;

struct Binder<'a> {
    ctx: &'a Ctx<'a>,
    package: &'a Package,
    skeleton: u32,
    inputs: &'a [InputDef],
    masks: &'a [Mask],
    /// Package index of `masks[0]`.
    mask_base: u32,
    selections: &'a [CurveSelection],
    /// Package index of `selections[0]`.
    selection_base: u32,
}

impl Binder<'_> {
    fn region(
        &self,
        key: &str,
        r: usize,
        doc: &S<RegionDoc>,
        sync_groups: &mut Vec<String>,
        ids: &mut BTreeSet<String>,
    ) -> Result<Region, TreeError> {
        let ctx = self.ctx;
        let d = doc.get_ref();
        let blend = match d.blend.as_ref().map(|b| (b.get_ref().as_str(), b.span())) {
            None | Some(("base", _)) => LayerBlend::Base,
            Some(("override", _)) => LayerBlend::Override,
            Some(("additive", _)) => LayerBlend::Additive,
            Some((other, span)) => {
                return Err(ctx.invalid(
                    span,
                    format!("{key}.blend"),
                    format!("'{other}' is not base, override or additive"),
                ))
            }
        };
        if (r == 0) != (blend == LayerBlend::Base) {
            return Err(ctx.invalid(
                doc.span(),
                format!("{key}.blend"),
                "the first region, and only it, is the base",
            ));
        }
        let base = blend == LayerBlend::Base;
        let mask = layer_ref(
            ctx,
            (doc.span(), format!("{key}.mask"), base),
            d.mask.as_ref(),
            self.masks.iter().map(|m| m.name.as_str()),
            (self.mask_base, "mask", TreeErrorKind::UnknownMask),
        )?;
        let curves = layer_ref(
            ctx,
            (doc.span(), format!("{key}.curves"), base),
            d.curves.as_ref(),
            self.selections.iter().map(|c| c.name.as_str()),
            (
                self.selection_base,
                "curve selection",
                TreeErrorKind::UnknownCurveSelection,
            ),
        )?;
        let weight = d.weight.as_ref().map_or(1.0, |w| *w.get_ref());
        if !(0.0..=1.0).contains(&weight) {
            let span = d.weight.as_ref().map_or(doc.span(), |w| w.span());
            return Err(ctx.invalid(span, format!("{key}.weight"), "weight outside [0, 1]"));
        }
        let names: BTreeMap<&str, u16> = self.state_names(key, d)?;
        let find = |s: &S<String>, k: String| -> Result<u16, TreeError> {
            names.get(s.get_ref().as_str()).copied().ok_or_else(|| {
                ctx.err(
                    s.span(),
                    k,
                    TreeErrorKind::UnknownState(s.get_ref().clone()),
                )
            })
        };
        let mut states = Vec::new();
        for (i, s) in d.states.get_ref().iter().enumerate() {
            let state = self.state(&format!("{key}.states[{i}]"), s, sync_groups)?;
            if blend != LayerBlend::Base && matches!(state.producer, Producer::Matching(_)) {
                return Err(ctx.invalid(
                    s.span(),
                    format!("{key}.states[{i}].motion_matching"),
                    "motion matching moves the character: only the base region may match",
                ));
            }
            states.push(state);
        }
        link_hierarchy(ctx, key, d, &mut states, &find)?;
        let initial = find(&d.initial, format!("{key}.initial"))?;
        if states[initial as usize].parent.is_some() {
            return Err(ctx.invalid(
                d.initial.span(),
                format!("{key}.initial"),
                "the initial state of a region is a top-level state",
            ));
        }
        let mut transitions = Vec::new();
        for (i, t) in d.transitions.iter().enumerate() {
            let tk = format!("{key}.transitions[{i}]");
            if !ids.insert(t.get_ref().id.get_ref().clone()) {
                let id = &t.get_ref().id;
                return Err(ctx.err(
                    id.span(),
                    format!("{tk}.id"),
                    TreeErrorKind::Duplicate(id.get_ref().clone()),
                ));
            }
            transitions.push(self.transition(&tk, t, &find, blend)?);
        }
        for (i, t) in transitions.iter().enumerate() {
            states[t.from as usize].transitions.push(i as u16);
        }
        for s in &mut states {
            s.transitions.sort_by(|&a, &b| {
                let (a, b) = (&transitions[a as usize], &transitions[b as usize]);
                b.priority.cmp(&a.priority).then_with(|| a.id.cmp(&b.id))
            });
        }
        let slots = states
            .iter()
            .map(|s| s.producer.clips().len())
            .max()
            .unwrap_or(0)
            .max(1) as u16;
        Ok(Region {
            name: d.name.get_ref().clone(),
            line: ctx.line(d.name.span().start),
            blend,
            mask,
            curves,
            weight: weight as f32,
            initial,
            states,
            transitions,
            slots,
        })
    }

    fn state_names<'d>(
        &self,
        key: &str,
        d: &'d RegionDoc,
    ) -> Result<BTreeMap<&'d str, u16>, TreeError> {
        let mut names = BTreeMap::new();
        for (i, s) in d.states.get_ref().iter().enumerate() {
            let name = &s.get_ref().name;
            if names.insert(name.get_ref().as_str(), i as u16).is_some() {
                return Err(self.ctx.err(
                    name.span(),
                    format!("{key}.states[{i}].name"),
                    TreeErrorKind::Duplicate(name.get_ref().clone()),
                ));
            }
        }
        Ok(names)
    }

    fn clip(&self, name: &S<String>, key: String) -> Result<u32, TreeError> {
        let found = self
            .package
            .clips
            .iter()
            .position(|c| &c.name == name.get_ref() && c.skeleton == self.skeleton);
        found.map(|c| c as u32).ok_or_else(|| {
            self.ctx.err(
                name.span(),
                key,
                TreeErrorKind::UnknownClip(name.get_ref().clone()),
            )
        })
    }

    fn float_input(&self, name: &S<String>, key: String) -> Result<u16, TreeError> {
        let i = self.inputs.iter().position(|i| &i.name == name.get_ref());
        match i {
            None => Err(self.ctx.err(
                name.span(),
                key,
                TreeErrorKind::UnknownInput(name.get_ref().clone()),
            )),
            Some(i) if self.inputs[i].ty != InputType::Float => Err(self.ctx.invalid(
                name.span(),
                key,
                "a blend space or motion matching reads a float input",
            )),
            Some(i) => Ok(i as u16),
        }
    }

    fn state(
        &self,
        key: &str,
        doc: &S<StateDoc>,
        sync_groups: &mut Vec<String>,
    ) -> Result<State, TreeError> {
        let ctx = self.ctx;
        let d = doc.get_ref();
        let producers = d.clip.is_some() as u8
            + d.blend1d.is_some() as u8
            + d.blend2d.is_some() as u8
            + d.motion_matching.is_some() as u8;
        if producers > 1 {
            return Err(ctx.invalid(
                doc.span(),
                key,
                "a state has at most one of clip, blend1d, blend2d and motion_matching",
            ));
        }
        let producer = self.producer(key, d)?;
        if producer.clips().len() > MAX_POINTS {
            return Err(ctx.invalid(
                doc.span(),
                key,
                format!("a blend space has at most {MAX_POINTS} points"),
            ));
        }
        let rate = d.rate.as_ref().map_or(1.0, |r| *r.get_ref());
        if !rate.is_finite() {
            return Err(ctx.invalid(
                d.rate.as_ref().map_or(doc.span(), |r| r.span()),
                format!("{key}.rate"),
                "rate is not finite",
            ));
        }
        let sync = match &d.sync {
            None => None,
            Some(g) => {
                let i = match sync_groups.iter().position(|x| x == g.get_ref()) {
                    Some(i) => i,
                    None if sync_groups.len() < MAX_SYNC_GROUPS => {
                        sync_groups.push(g.get_ref().clone());
                        sync_groups.len() - 1
                    }
                    None => {
                        return Err(ctx.invalid(
                            g.span(),
                            format!("{key}.sync"),
                            format!("a tree has at most {MAX_SYNC_GROUPS} sync groups"),
                        ))
                    }
                };
                Some(i as u16)
            }
        };
        let root_motion = match d
            .root_motion
            .as_ref()
            .map(|r| (r.get_ref().as_str(), r.span()))
        {
            None | Some(("full", _)) => RootMotionUse::Full,
            Some(("planar", _)) => RootMotionUse::Planar,
            Some(("none", _)) => RootMotionUse::Ignore,
            Some((other, span)) => {
                return Err(ctx.invalid(
                    span,
                    format!("{key}.root_motion"),
                    format!("'{other}' is not full, planar or none"),
                ))
            }
        };
        // Parents and initial children are linked once every state exists.
        Ok(State {
            name: d.name.get_ref().clone(),
            line: ctx.line(d.name.span().start),
            parent: None,
            depth: 0,
            initial: None,
            producer,
            mode: d.mode.as_ref().map(|m| *m.get_ref()),
            rate,
            sync,
            root_motion,
            transitions: Vec::new(),
        })
    }

    fn producer(&self, key: &str, d: &StateDoc) -> Result<Producer, TreeError> {
        let ctx = self.ctx;
        if let Some(c) = &d.clip {
            return Ok(Producer::Clip(self.clip(c, format!("{key}.clip"))?));
        }
        if let Some(b) = &d.blend1d {
            let b1 = b.get_ref();
            let input = self.float_input(&b1.input, format!("{key}.blend1d.input"))?;
            let mut points = Vec::new();
            for (i, p) in b1.points.iter().enumerate() {
                let at = *p.get_ref().at.get_ref();
                if !at.is_finite() {
                    return Err(ctx.invalid(
                        p.get_ref().at.span(),
                        format!("{key}.blend1d.points[{i}].at"),
                        "position is not finite",
                    ));
                }
                points.push((
                    at,
                    self.clip(&p.get_ref().clip, format!("{key}.blend1d.points[{i}].clip"))?,
                ));
            }
            if points.is_empty() {
                return Err(ctx.invalid(
                    b.span(),
                    format!("{key}.blend1d.points"),
                    "a blend space has at least one point",
                ));
            }
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            if points.windows(2).any(|w| w[0].0 == w[1].0) {
                return Err(ctx.invalid(
                    b.span(),
                    format!("{key}.blend1d.points"),
                    "two points share a position",
                ));
            }
            let (at, clips) = points.into_iter().unzip();
            return Ok(Producer::Blend1d { input, at, clips });
        }
        if let Some(b) = &d.blend2d {
            let b2 = b.get_ref();
            let x = self.float_input(&b2.x, format!("{key}.blend2d.x"))?;
            let y = self.float_input(&b2.y, format!("{key}.blend2d.y"))?;
            let mut points = Vec::new();
            let mut clips = Vec::new();
            for (i, p) in b2.points.iter().enumerate() {
                let [px, py] = *p.get_ref().at.get_ref();
                if !(px.is_finite() && py.is_finite()) {
                    return Err(ctx.invalid(
                        p.get_ref().at.span(),
                        format!("{key}.blend2d.points[{i}].at"),
                        "position is not finite",
                    ));
                }
                points.push(DVec2::new(px, py));
                clips
                    .push(self.clip(&p.get_ref().clip, format!("{key}.blend2d.points[{i}].clip"))?);
            }
            let triangles = triangulate(&points).map_err(|e| {
                ctx.invalid(b.span(), format!("{key}.blend2d.points"), e.to_string())
            })?;
            return Ok(Producer::Blend2d {
                x,
                y,
                points,
                clips,
                triangles,
            });
        }
        if let Some(m) = &d.motion_matching {
            return Ok(Producer::Matching(Box::new(
                self.matching(&format!("{key}.motion_matching"), m)?,
            )));
        }
        Ok(Producer::Empty)
    }

    fn matching(&self, key: &str, doc: &S<MatchingDoc>) -> Result<Matching, TreeError> {
        let ctx = self.ctx;
        let m = doc.get_ref();
        let index = *m.database.get_ref();
        let databases = &self.package.motion_databases;
        let db = usize::try_from(index)
            .ok()
            .and_then(|i| databases.get(i))
            .ok_or_else(|| {
                ctx.invalid(
                    m.database.span(),
                    format!("{key}.database"),
                    format!(
                        "the package has {} motion database(s); build one with `throng motion-database`",
                        databases.len()
                    ),
                )
            })?;
        if db.skeleton != self.skeleton {
            return Err(ctx.invalid(
                m.database.span(),
                format!("{key}.database"),
                format!(
                    "the database is of skeleton {}, the tree of skeleton {}",
                    db.skeleton, self.skeleton
                ),
            ));
        }
        let initial = db.clips.first().map(|c| c.clip).ok_or_else(|| {
            ctx.invalid(
                m.database.span(),
                format!("{key}.database"),
                "the database has no clips",
            )
        })?;
        let positive = |v: &Option<S<f64>>, name: &str, default: f64| -> Result<f64, TreeError> {
            match v {
                None => Ok(default),
                Some(x) if x.get_ref().is_finite() && *x.get_ref() > 0.0 => Ok(*x.get_ref()),
                Some(x) => Err(ctx.invalid(
                    x.span(),
                    format!("{key}.{name}"),
                    format!("{name} is {}; it must be finite and > 0", x.get_ref()),
                )),
            }
        };
        let every = match &m.every {
            None => DEFAULT_EVERY,
            Some(e) if (1..=i64::from(u16::MAX)).contains(e.get_ref()) => *e.get_ref() as u32,
            Some(e) => {
                return Err(ctx.invalid(
                    e.span(),
                    format!("{key}.every"),
                    format!("every is {} ticks; it must be in 1..=65535", e.get_ref()),
                ))
            }
        };
        let blend = positive(&m.blend, "blend", 0.2)?;
        if blend > f64::from(MAX_INERTIALIZATION) {
            return Err(ctx.invalid(
                m.blend.as_ref().map_or(doc.span(), |b| b.span()),
                format!("{key}.blend"),
                format!("an inertialization lasts at most {MAX_INERTIALIZATION} s"),
            ));
        }
        let mut tags = 0u8;
        for (i, t) in m.tags.iter().flatten().enumerate() {
            tags |= tag::of(t.get_ref()).ok_or_else(|| {
                ctx.invalid(
                    t.span(),
                    format!("{key}.tags[{i}]"),
                    format!("'{}' is not one of {:?}", t.get_ref(), tag::NAMES),
                )
            })?;
        }
        Ok(Matching {
            database: index as u16,
            initial,
            velocity: [
                self.float_input(&m.velocity_x, format!("{key}.velocity_x"))?,
                self.float_input(&m.velocity_z, format!("{key}.velocity_z"))?,
            ],
            turn: self.float_input(&m.turn, format!("{key}.turn"))?,
            stop_distance: (m.stop_distance.as_ref())
                .map(|n| self.float_input(n, format!("{key}.stop_distance")))
                .transpose()?,
            every,
            blend,
            halflife: positive(&m.halflife, "halflife", 0.25)?,
            departure: positive(&m.departure, "departure", 0.5)?,
            tags,
            warp_speed: match &m.warp_speed {
                Some(w) if !(0.0..=1.0).contains(w.get_ref()) => {
                    return Err(ctx.invalid(
                        w.span(),
                        format!("{key}.warp_speed"),
                        "warp_speed is a fraction of the step, in [0, 1]",
                    ))
                }
                w => w.as_ref().map_or(0.5, |w| *w.get_ref()),
            },
            warp_turn: positive(&m.warp_turn, "warp_turn", 2.0)?,
        })
    }

    fn transition(
        &self,
        key: &str,
        doc: &S<TransitionDoc>,
        find: &FindState,
        region: LayerBlend,
    ) -> Result<Transition, TreeError> {
        let ctx = self.ctx;
        let d = doc.get_ref();
        let from = find(&d.from, format!("{key}.from"))?;
        let to = find(&d.to, format!("{key}.to"))?;
        let duration = d.duration.as_ref().map_or(0.0, |x| *x.get_ref());
        if !(duration.is_finite() && duration >= 0.0) {
            let span = d.duration.as_ref().map_or(doc.span(), |x| x.span());
            return Err(ctx.invalid(
                span,
                format!("{key}.duration"),
                "duration is not a finite number of seconds >= 0",
            ));
        }
        let blend = match d.blend.as_ref().map(|b| (b.get_ref().as_str(), b.span())) {
            None | Some(("crossfade", _)) => TransitionBlend::Crossfade,
            Some(("inertialize", _)) if region == LayerBlend::Base => TransitionBlend::Inertialize,
            Some(("inertialize", span)) => {
                return Err(ctx.invalid(
                    span,
                    format!("{key}.blend"),
                    "inertialize is supported in the base region only; use crossfade in layers",
                ))
            }
            Some((_, span)) => {
                return Err(ctx.invalid(
                    span,
                    format!("{key}.blend"),
                    "blend is \"crossfade\" or \"inertialize\"",
                ))
            }
        };
        if blend == TransitionBlend::Inertialize && duration > MAX_INERTIALIZATION as f64 {
            let span = d.duration.as_ref().map_or(doc.span(), |x| x.span());
            return Err(ctx.invalid(
                span,
                format!("{key}.duration"),
                "an inertialization decays within 60 seconds at most",
            ));
        }
        let mut when = Vec::new();
        for (i, c) in d.when.iter().enumerate() {
            when.push(self.clause(&format!("{key}.when[{i}]"), c)?);
        }
        Ok(Transition {
            id: d.id.get_ref().clone(),
            from,
            to,
            priority: d.priority.as_ref().map_or(0, |p| *p.get_ref()),
            duration,
            blend,
            when,
        })
    }

    fn clause(&self, key: &str, doc: &S<ClauseDoc>) -> Result<Clause, TreeError> {
        let ctx = self.ctx;
        let d = doc.get_ref();
        let kinds =
            d.input.is_some() as u8 + d.elapsed.is_some() as u8 + d.completed.is_some() as u8;
        if kinds != 1 {
            return Err(ctx.invalid(
                doc.span(),
                key,
                "a clause has exactly one of input, elapsed and completed",
            ));
        }
        if let Some(c) = &d.completed {
            if d.op.is_some() || d.value.is_some() {
                return Err(ctx.invalid(doc.span(), key, "completed takes no op or value"));
            }
            return Ok(Clause::Completed(*c.get_ref()));
        }
        let value = d
            .value
            .as_ref()
            .ok_or_else(|| ctx.invalid(doc.span(), format!("{key}.value"), "missing value"))?;
        if let Some(op) = &d.elapsed {
            if d.op.is_some() {
                return Err(ctx.invalid(
                    doc.span(),
                    format!("{key}.op"),
                    "elapsed carries its operator: elapsed = \">=\"",
                ));
            }
            let cmp = Cmp::parse(op.get_ref()).ok_or_else(|| {
                ctx.invalid(
                    op.span(),
                    format!("{key}.elapsed"),
                    format!("'{}' is not a comparison", op.get_ref()),
                )
            })?;
            let Value::Float(seconds) =
                typed(ctx, value, InputType::Float, &format!("{key}.value"))?
            else {
                unreachable!()
            };
            return Ok(Clause::Elapsed { cmp, seconds });
        }
        let name = d
            .input
            .as_ref()
            .ok_or_else(|| ctx.invalid(doc.span(), key, "missing input"))?;
        let input = self
            .inputs
            .iter()
            .position(|i| &i.name == name.get_ref())
            .ok_or_else(|| {
                ctx.err(
                    name.span(),
                    format!("{key}.input"),
                    TreeErrorKind::UnknownInput(name.get_ref().clone()),
                )
            })?;
        let op =
            d.op.as_ref()
                .ok_or_else(|| ctx.invalid(doc.span(), format!("{key}.op"), "missing op"))?;
        let cmp = Cmp::parse(op.get_ref()).ok_or_else(|| {
            ctx.invalid(
                op.span(),
                format!("{key}.op"),
                format!("'{}' is not a comparison", op.get_ref()),
            )
        })?;
        let ty = self.inputs[input].ty;
        if ty == InputType::Bool && !matches!(cmp, Cmp::Eq | Cmp::Ne) {
            return Err(ctx.invalid(
                op.span(),
                format!("{key}.op"),
                "a bool input compares with == or != only",
            ));
        }
        let value = typed(ctx, value, ty, &format!("{key}.value"))?;
        Ok(Clause::Input {
            input: input as u16,
            cmp,
            value,
        })
    }
}

/// Links parents and initial children, computes depths, and checks the hierarchy: parents
/// exist and form no loop, states with children name an initial child among them, leaves
/// do not, and only leaves produce poses.
fn link_hierarchy(
    ctx: &Ctx,
    key: &str,
    d: &RegionDoc,
    states: &mut [State],
    find: &FindState,
) -> Result<(), TreeError> {
    for (i, s) in d.states.get_ref().iter().enumerate() {
        if let Some(p) = &s.get_ref().parent {
            states[i].parent = Some(find(p, format!("{key}.states[{i}].parent"))?);
        }
    }
    for (i, s) in d.states.get_ref().iter().enumerate() {
        let mut depth = 0usize;
        let mut at = states[i].parent;
        while let Some(p) = at {
            depth += 1;
            if depth >= MAX_DEPTH {
                return Err(ctx.invalid(
                    s.span(),
                    format!("{key}.states[{i}].parent"),
                    format!("the parent chain loops or is deeper than {MAX_DEPTH}"),
                ));
            }
            at = states[p as usize].parent;
        }
        states[i].depth = depth as u8;
    }
    for (i, s) in d.states.get_ref().iter().enumerate() {
        let sk = format!("{key}.states[{i}]");
        let has_children = states.iter().any(|c| c.parent == Some(i as u16));
        match (&s.get_ref().initial, has_children) {
            (Some(c), true) => {
                let child = find(c, format!("{sk}.initial"))?;
                if states[child as usize].parent != Some(i as u16) {
                    return Err(ctx.invalid(
                        c.span(),
                        format!("{sk}.initial"),
                        format!("'{}' is not a child of '{}'", c.get_ref(), states[i].name),
                    ));
                }
                states[i].initial = Some(child);
            }
            (None, true) => {
                return Err(ctx.invalid(
                    s.span(),
                    format!("{sk}.initial"),
                    "a state with children names its initial child",
                ))
            }
            (Some(c), false) => {
                return Err(ctx.invalid(
                    c.span(),
                    format!("{sk}.initial"),
                    "a state without children has no initial child",
                ))
            }
            (None, false) => {}
        }
        if has_children && states[i].producer != Producer::Empty {
            return Err(ctx.invalid(s.span(), sk, "only leaf states produce poses"));
        }
    }
    Ok(())
}

/// The play mode of `clip` in `state`: the state's, else the clip's cooked loop policy.
pub fn mode_for(state: &State, package: &Package, clip: u32) -> PlayMode {
    state.mode.unwrap_or(
        match package.clips.get(clip as usize).map(|c| c.loop_policy) {
            Some(LoopPolicy::Loop) => PlayMode::Loop,
            _ => PlayMode::Once,
        },
    )
}
