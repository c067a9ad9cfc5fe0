// Offscreen raster pass over skinned instances (DESIGN.md §6, last stage), plus a ground grid.
//
// Scene space: right-handed, +Y up, metres; `frame.view_proj` maps scene space to clip space
// with depth in [0, 1] (smaller is nearer, compare `less`). Colours are computed in linear
// light and written to an sRGB target.
//
// Crowd: vertex pulling. One instanced, indexed draw per (skinned batch, page of the skinned
// stream): the index buffer holds the skin's triangle indices (`vertex_index` is a vertex of the
// skin), `instance_index` counts from 0 within the draw, and the skinned vertex is
// `skinned[instance_index * stride + vertex_index]` of the draw's range (the skinning pass's
// instance-major output, already placed in the scene: position bits and the octahedral normal,
// `decode_normal` of math.wgsl). The draw is indirect (budget.wgsl): its instances are the
// batch's skinned ones on the draw's page of the skinned pool, from `ranks[draw.first_at]`
// within the page; `order[draw.page_rank + that]` is an instance's frame slot. Lighting: one directional light (Lambert, lit from both faces) plus a
// sky/ground hemispheric ambient, times a per-instance tint hashed from the instance's number in
// the frame, so neighbours are told apart (the first `draw.highlight` instances of the frame get
// one gold tint instead: heroes; with a tier tint, `tier_colour` of the slot's tier instead);
// distance fog toward the background colour.
// Meshes without normals (normal = 0) are lit with the triangle's screen-space derivative normal.
//
// Ground: one quad of 6 vertices generated from `vertex_index`, a grid of lines every
// `frame.ground.z` metres, faded with distance.

struct Frame {
    view_proj: mat4x4<f32>,
    /// xyz: camera position.
    eye: vec4<f32>,
    /// xyz: unit direction toward the light.
    light: vec4<f32>,
    /// x: ground height, y: half extent of the ground quad, z: grid cell, w: fog distance.
    ground: vec4<f32>,
    /// xyz: centre of the ground quad (y ignored); while baking impostors, the card's centre
    /// and (w) its inverse radius.
    centre: vec4<f32>,
    /// rgb: background (clear) colour, linear.
    background: vec4<f32>,
    /// x: frame slots with a tier in `tiers` (0: no tier tint); y: 1 writes the impostor
    /// bake's texels instead of the crowd's colour (`bake_texel`), 2 its frame slots
    /// (`member_colour`; the ground and props none); z: frame slots with a fade in `fades`.
    tiers: vec4<u32>,
    /// Motion vectors: the previous frame's view-projection, and the image size in pixels and
    /// the motion (pixels) that maps to the edge of the encoding (x, y, z).
    previous_view_proj: mat4x4<f32>,
    motion: vec4<f32>,
}

/// Per draw: the skinned stream's elements per instance, the rank of its page's first
/// instance, where its first instance within the page is written, how many of the frame's
/// first slots are drawn in `HIGHLIGHT` (heroes), and how far its level's surface is pushed out
/// along the skinned normals (`shell`, scene units: a mesh LOD's, so that its silhouette
/// covers what full detail's does; 0 at full detail).
struct Draw {
    stride: u32,
    page_rank: u32,
    first_at: u32,
    highlight: u32,
    shell: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

/// Colour of highlighted instances, linear: gold.
const HIGHLIGHT: vec3<f32> = vec3<f32>(0.95, 0.62, 0.08);

@group(0) @binding(0) var<uniform> frame: Frame;
/// Per frame slot, its tier (1–4) for the tier tint.
@group(0) @binding(1) var<storage, read> tiers: array<u32>;
/// Per frame slot, what it cross-fades with: x > 0 the share of its pixels its card takes
/// while it crosses tiers, x < 0 minus the share its next coarser mesh LOD takes while it
/// crosses levels (`crowd_coarser_vs`), 0 nothing (the mesh alone); yzw the pixel its dither is
/// anchored at, as a scene point (the card's centre, or the member's origin). The mesh keeps
/// the pixels whose `dither` is at least the share, the card (`card_fs`) or coarser level
/// (`crowd_coarser_fs`) the others.
@group(0) @binding(2) var<storage, read> fades: array<vec4<f32>>;
@group(1) @binding(0) var<uniform> draw: Draw;
@group(1) @binding(1) var<storage, read> skinned: array<vec4<u32>>;
@group(1) @binding(2) var<storage, read> ranks: array<u32>;
@group(1) @binding(3) var<storage, read> order: array<u32>;
/// Motion vectors: the draw's range of the previous positions (throng-cpu-ref `motion`), laid
/// out as `skinned`.
@group(1) @binding(4) var<storage, read> previous: array<vec4<f32>>;

struct CrowdVarying {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) @interpolate(flat) tint: vec3<f32>,
}

/// `CrowdVarying` and what a cross-fade needs (`crowd_fading_vs`): the card's share of the
/// member's pixels (`fades`), and the pixel its dither is anchored at. Separate, so a frame
/// without a cross-fade interpolates nothing more than it did before there was one.
struct FadingVarying {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) @interpolate(flat) tint: vec3<f32>,
    @location(3) @interpolate(flat) share: f32,
    @location(4) @interpolate(flat) anchor: vec2<u32>,
}

/// An ordered-dither threshold in (0, 1) for the pixel at `p` (framebuffer coordinates): the
/// 4 × 4 Bayer matrix from pixel `anchor`, shifted by `shift` pixels so that two decisions of
/// one pixel use different thresholds. Over any 4 × 4 block a share s of the thresholds lies
/// below s (to 1/16), so a mesh and a card that keep complementary pixels cover what a mix
/// would; anchored at the member's centre, the pattern moves with it, so its coverage does not
/// flicker as it crosses pixels.
fn dither(p: vec2<f32>, anchor: vec2<u32>, shift: vec2<u32>) -> f32 {
    let q = (vec2<u32>(p) - anchor + shift) & vec2<u32>(3u);
    // The matrix's entry by bit arithmetic, not a table (an indexed private array costs a
    // gather per pixel on a CPU driver): the bits of x ^ y and y interleaved, reversed.
    let a = q.x ^ q.y;
    let bayer = ((a & 1u) << 3u) | ((q.y & 1u) << 2u) | ((a & 2u)) | ((q.y >> 1u) & 1u);
    return (f32(bayer) + 0.5) / 16.0;
}

/// What member ids mode writes for frame slot `slot` (`NO_MEMBER`: none), linear: slot + 1 in
/// base-64 digits, each digit d as the byte 4d + 2 once the target encodes sRGB (throng-gpu
/// `raster::member_at` reads it back).
/// The pixel of scene point `centre` (0 behind the eye): the dither's anchor, computed the
/// same way for a member's mesh and its card.
fn anchor_of(centre: vec3<f32>) -> vec2<u32> {
    return anchor_at(frame.view_proj * vec4<f32>(centre, 1.0));
}

/// `anchor_of` the point at clip position `c`.
fn anchor_at(c: vec4<f32>) -> vec2<u32> {
    if c.w <= 1e-6 {
        return vec2<u32>(0u);
    }
    let ndc = c.xy / c.w;
    let pixel = (vec2<f32>(0.5 + 0.5 * ndc.x, 0.5 - 0.5 * ndc.y)) * frame.motion.xy;
    return vec2<u32>(vec2<i32>(floor(pixel)) & vec2<i32>(3));
}

fn member_colour(slot: u32) -> vec3<f32> {
    let k = slot + 1u;
    let bytes = (vec3<u32>(k, k >> 6u, k >> 12u) & vec3<u32>(63u)) * 4u + 2u;
    let c = vec3<f32>(bytes) / 255.0;
    return select(pow((c + 0.055) / 1.055, vec3<f32>(2.4)), c / 12.92, c <= vec3<f32>(0.04045));
}

/// Member ids mode's "no member" (`member_colour` of it is all zero digits).
const NO_MEMBER: u32 = 0xffffffffu;

/// Whether the fragments write member ids (`Frame::tiers.y`).
fn member_ids() -> bool {
    return frame.tiers.y == 2u;
}

/// A well-mixed 32-bit hash (Jarzynski & Olano, "Hash Functions for GPU Rendering", JCGT 2020,
/// https://jcgt.org/published/0009/03/02/: PCG).
fn pcg(n: u32) -> u32 {
    let state = n * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

/// A clothing-like colour for instance `n`: hue from the hash, moderate saturation, linear.
fn tint(n: u32) -> vec3<f32> {
    let h = pcg(n);
    let hue = f32(h & 0xffffu) / 65535.0;
    let saturation = 0.45 + 0.35 * f32((h >> 16u) & 0xffu) / 255.0;
    let value = 0.6 + 0.35 * f32(h >> 24u) / 255.0;
    let k = (vec3<f32>(5.0, 3.0, 1.0) + hue * 6.0) % vec3<f32>(6.0);
    let rgb = value - value * saturation * clamp(min(k, 4.0 - k), vec3<f32>(0.0), vec3<f32>(1.0));
    return rgb * rgb; // roughly sRGB → linear
}

@vertex
fn crowd_vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> CrowdVarying {
    return crowd_vertex(v, i);
}

/// Vertex `v` of the draw's instance `i` (`crowd_vs`).
fn crowd_vertex(v: u32, i: u32) -> CrowdVarying {
    let k = ranks[draw.first_at] + i;
    let s = skinned[k * draw.stride + v];
    let normal = decode_normal(s.w);
    let position = bitcast<vec3<f32>>(s.xyz) + normal * draw.shell;
    var out: CrowdVarying;
    out.clip = frame.view_proj * vec4<f32>(position, 1.0);
    out.world = position;
    out.normal = normal;
    let n = order[draw.page_rank + k];
    out.tint = select(tint(n), HIGHLIGHT, n < draw.highlight);
    if n < frame.tiers.x {
        out.tint = tier_colour(tiers[n]);
    }
    if member_ids() {
        out.tint = member_colour(n);
    }
    return out;
}

@vertex
fn crowd_fading_vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> FadingVarying {
    return fading_vertex(v, i);
}

/// Vertex `v` of the draw's instance `i` with its cross-fade share (`crowd_fading_vs`).
fn fading_vertex(v: u32, i: u32) -> FadingVarying {
    let c = crowd_vertex(v, i);
    var out: FadingVarying;
    out.clip = c.clip;
    out.world = c.world;
    out.normal = c.normal;
    out.tint = c.tint;
    out.share = 0.0;
    out.anchor = vec2<u32>(0u);
    let n = order[draw.page_rank + ranks[draw.first_at] + i];
    if n < frame.tiers.z {
        let f = fades[n];
        out.share = abs(f.x);
        out.anchor = anchor_of(f.yzw);
    }
    return out;
}

/// The draw of a run's instances with the next coarser level's triangles over the run's
/// skinned vertices (its shell in `draw`): a member cross-fading between the two levels keeps
/// the pixels its fine mesh leaves (`crowd_coarser_fs`); every other instance's triangles
/// collapse outside the view volume, so they cost their vertices and nothing more.
@vertex
fn crowd_coarser_vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> FadingVarying {
    var out = fading_vertex(v, i);
    let n = order[draw.page_rank + ranks[draw.first_at] + i];
    out.share = 0.0;
    if n < frame.tiers.z {
        out.share = max(-fades[n].x, 0.0);
    }
    if out.share <= 0.0 {
        out.clip = vec4<f32>(2.0, 2.0, 2.0, 1.0);
    }
    return out;
}

// Props (docs/gpu.md, "Attachments"): one instanced, indexed, indirect draw per attachment;
// `instance_index` is a rank of the skinned pool and `props[prop.base + instance_index]` (three
// rows) the prop's scene transform, which the attachments pass wrote (attach.wgsl). A prop
// vertex is two vec4s in the prop's frame: position (w = 1), normal (w = 0); the normal is
// turned by the transform's linear part (props are placed rigidly, up to the palette's
// scale). The fragment stage is the crowd's, the prop's colour its tint. Group 3, beside the
// crowd's group 1 and the cards' group 2.

/// Per attachment draw: its first transform in `props`, its colour (linear rgb).
struct PropDraw {
    base: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    colour: vec4<f32>,
}

@group(3) @binding(0) var<uniform> prop: PropDraw;
@group(3) @binding(1) var<storage, read> props: array<vec4<f32>>;
@group(3) @binding(2) var<storage, read> prop_vertices: array<vec4<f32>>;

@vertex
fn prop_vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> CrowdVarying {
    let at = 3u * (prop.base + i);
    let m = Affine(props[at], props[at + 1u], props[at + 2u]);
    let position = affine_point(m, prop_vertices[2u * v].xyz);
    let n = prop_vertices[2u * v + 1u].xyz;
    let turned = vec3<f32>(dot(m.r0.xyz, n), dot(m.r1.xyz, n), dot(m.r2.xyz, n));
    var out: CrowdVarying;
    out.clip = frame.view_proj * vec4<f32>(position, 1.0);
    out.world = position;
    out.normal = select(vec3<f32>(0.0), normalize(turned), dot(turned, turned) > 1e-20);
    out.tint = select(prop.colour.rgb, member_colour(NO_MEMBER), member_ids());
    return out;
}

/// The tier tint, linear: 1 green, 2 yellow, 3 orange, 4 red, anything else blue.
fn tier_colour(tier: u32) -> vec3<f32> {
    switch tier {
        case 1u: { return vec3<f32>(0.10, 0.65, 0.15); }
        case 2u: { return vec3<f32>(0.80, 0.75, 0.10); }
        case 3u: { return vec3<f32>(0.90, 0.40, 0.05); }
        case 4u: { return vec3<f32>(0.80, 0.05, 0.05); }
        default: { return vec3<f32>(0.10, 0.20, 0.85); }
    }
}

const SKY: vec3<f32> = vec3<f32>(0.55, 0.62, 0.75);
const BOUNCE: vec3<f32> = vec3<f32>(0.30, 0.27, 0.22);
const AMBIENT: f32 = 0.35;
const SUN: vec3<f32> = vec3<f32>(1.0, 0.96, 0.9);

/// Direct light plus hemispheric ambient for albedo `albedo` at unit normal `n`.
fn shade(albedo: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    let ambient = mix(BOUNCE, SKY, 0.5 + 0.5 * n.y) * AMBIENT;
    let direct = SUN * max(dot(n, frame.light.xyz), 0.0);
    return albedo * (ambient + direct);
}

/// How far `fog` mixes a point at `world` toward the background (0–0.85).
fn fog_amount(world: vec3<f32>) -> f32 {
    let end = frame.ground.w;
    let f = clamp((distance(world, frame.eye.xyz) - 0.5 * end) / (0.5 * end), 0.0, 1.0);
    return 0.85 * f * f;
}

/// Mixes `colour` toward the background beyond half the fog distance.
fn fog(colour: vec3<f32>, world: vec3<f32>) -> vec3<f32> {
    return mix(colour, frame.background.rgb, fog_amount(world));
}

/// `fog(shade(albedo, n), world)` as `base + slope * n.y + lit * max(dot(n, light), 0)`, the
/// three terms fixed for one albedo and fog amount (a card: its tint, fogged at its centre).
struct ShadeTerms {
    base: vec3<f32>,
    slope: vec3<f32>,
    lit: vec3<f32>,
}

fn shade_terms(albedo: vec3<f32>, fogged: f32) -> ShadeTerms {
    let a = albedo * (1.0 - fogged);
    var t: ShadeTerms;
    t.base = a * (0.5 * AMBIENT) * (BOUNCE + SKY) + frame.background.rgb * fogged;
    t.slope = a * (0.5 * AMBIENT) * (SKY - BOUNCE);
    t.lit = a * SUN;
    return t;
}

@fragment
fn crowd_fs(in: CrowdVarying) -> @location(0) vec4<f32> {
    return crowd_colour(in, cross(dpdx(in.world), dpdy(in.world)));
}

/// `crowd_fs` for frames where members cross-fade into cards or their next mesh LOD: the pixels
/// of a member's mesh that its card or coarser level takes are left out. A separate entry
/// point, so frames without a cross-fade keep a fragment stage that never discards (and its
/// early depth test).
@fragment
fn crowd_fading_fs(in: FadingVarying) -> @location(0) vec4<f32> {
    return fading_colour(in, false);
}

/// `crowd_fading_fs`'s complement for the coarser level of members crossing levels: it keeps
/// the pixels the fine mesh leaves out.
@fragment
fn crowd_coarser_fs(in: FadingVarying) -> @location(0) vec4<f32> {
    return fading_colour(in, true);
}

/// The colour of a cross-fading fragment: the pixels whose dither threshold is under its share
/// are the other representation's (`taken`: this is the other's, and keeps only those).
fn fading_colour(in: FadingVarying, taken: bool) -> vec4<f32> {
    // Derivatives first, in uniform control flow.
    let faceted = cross(dpdx(in.world), dpdy(in.world));
    if (dither(in.clip.xy, in.anchor, vec2<u32>(0u)) < in.share) != taken {
        discard;
    }
    var c: CrowdVarying;
    c.clip = in.clip;
    c.world = in.world;
    c.normal = in.normal;
    c.tint = in.tint;
    return crowd_colour(c, faceted);
}

/// What the impostor bake stores for a surface point `world` of unit normal `n` (component
/// space): the octahedral projection of `n` with +Y as its pole (`oct_wrap` of `n.xzy`: the
/// fold falls on normals facing down, which a standing character shows least, so mip averages
/// seldom straddle it) in rg, and in b the point's offset from the card's centre toward the
/// bake camera in card radii, −1 to 1 as 0 to 1 (`frame.centre`: the card's centre and its
/// inverse radius while baking), so cards can write per-texel depth (`card_fs`).
fn bake_texel(n: vec3<f32>, world: vec3<f32>) -> vec4<f32> {
    let m = n.xzy;
    let p = oct_wrap(m, max(abs(m.x) + abs(m.y) + abs(m.z), 1e-20));
    let toward = normalize(frame.eye.xyz - frame.centre.xyz);
    let depth = 0.5 + 0.5 * dot(world - frame.centre.xyz, toward) * frame.centre.w;
    return vec4<f32>(0.5 + 0.5 * p, clamp(depth, 0.0, 1.0), 1.0);
}

/// The colour of a crowd fragment with interpolants `in`, `faceted` the screen-space normal of
/// its triangle (for meshes without normals).
fn crowd_colour(in: CrowdVarying, faceted: vec3<f32>) -> vec4<f32> {
    var n = in.normal;
    if dot(n, n) < 0.25 {
        n = faceted;
    }
    n = normalize(n);
    // Lit from the side the camera sees.
    if dot(n, frame.eye.xyz - in.world) < 0.0 {
        n = -n;
    }
    if frame.tiers.y == 1u {
        return bake_texel(n, in.world);
    }
    if member_ids() {
        return vec4<f32>(in.tint, 1.0);
    }
    return vec4<f32>(fog(shade(in.tint, n), in.world), 1.0);
}

// Far tier (throng-cpu-ref impostor.rs, whose conventions this follows): one instanced draw of
// a 4-vertex strip per card. A card is a square of half size `atlas.radius · scale` centred on
// its scene-space centre, facing the camera (right = normalize(Y × d), up = d × right, d the
// unit direction toward the eye); it shows the cell of its frame (`first`: the cell of row 0,
// view 0) at the baked direction nearest to d seen from the character (d turned by −yaw about
// Y): the two baked azimuths around it at the nearest elevation row, and the two frames around
// its clip time (`first`, `next`, mixed by `blend`): four cells, mixed per pixel by ordered
// dither (each pixel reads one cell: a view by the azimuth's fraction, a frame by `blend`), so
// the card changes as smoothly as its member turns and moves at one texture fetch a pixel.
// The texel holds the component-space normal (`bake_texel`), turned by yaw into the scene and
// lit like the crowd; alpha below one half is discarded, and so are the pixels the member's
// mesh keeps while the two cross-fade (`fade` below 1: `fades`). Depth is per texel
// (`card_fs`); the motion-vector pass's cards keep the card's plane. Group 2, so one module
// holds it beside the crowd's group 1.
//
// Only the part of the square that can pass the alpha test is drawn: the cell's covered
// rectangle (`rects`, texels of alpha > 0 at the atlas's full size), grown by what the sampler
// can reach past it and still pass. A texel of mip level k is non-zero only over a non-zero
// full-size texel, so its centre lies at most 2^k / 2 − 1/2 full-size texels past the
// rectangle; a filtered fetch reaches alpha 0.5 (the test) at most half a texel, 2^k / 2, past
// the centre of a texel of alpha 1 or less; and the card reads level k = round(λ), λ = log2 of
// texels per pixel ρ, so 2^k ≤ √2 ρ: a passing pixel lies within √2 ρ texels of the rectangle
// (1 when magnified). The margin is 2ρ (at least 2 texels), ρ taken from the card's narrower
// projected side at its centre, against the perspective's change of ρ across the card
// (`cards_trimmed_to_their_cells_coverage_draw_what_whole_squares_draw_at_every_distance`:
// trimmed and whole cards draw the same pixels, also with no margin but for 2 of 33 335).

struct Atlas {
    /// Cells per atlas row, views per row of elevation, elevation rows, cell side in texels.
    columns: u32,
    views: u32,
    rows: u32,
    cell: u32,
    /// A cell's size in uv (x, y), the card's half size (scene units, before `scale`).
    cell_uv: vec2<f32>,
    radius: f32,
    pad1: f32,
    /// Elevation of each row, radians (impostor.rs MAX_IMPOSTOR_ROWS).
    elevations: array<vec4<f32>, 2>,
}

/// One card (host mirror: throng-gpu `impostor::Card`, 48 bytes).
struct Card {
    centre: vec3<f32>,
    /// Rotation about +Y of the instance (radians) and its uniform scale.
    yaw: f32,
    scale: f32,
    /// The instance's frame slot (its hashed tint), the first cell of its frame, and its tier
    /// (0: its own tint, or blue under a tier tint; else `tier_colour`).
    slot: u32,
    first: u32,
    tier: u32,
    /// The neighbouring frame's first cell and how far toward it the clip time lies (0–½); the
    /// card's share of the member's pixels (1: a card alone).
    next: u32,
    blend: f32,
    fade: f32,
    pad: u32,
}

@group(2) @binding(0) var<uniform> atlas: Atlas;
@group(2) @binding(1) var<storage, read> cards: array<Card>;
@group(2) @binding(2) var atlas_texture: texture_2d<f32>;
@group(2) @binding(3) var atlas_sampler: sampler;
/// Per cell, its covered rectangle in the card's corner coordinates (x right, y up, the square
/// spanning −1 to 1): (x0, y0, x1, y1); x0 > x1 when the cell is empty (throng-gpu
/// `impostor::cell_rects`).
@group(2) @binding(4) var<storage, read> rects: array<vec4<f32>>;

struct CardVarying {
    @builtin(position) clip: vec4<f32>,
    /// Where in a cell (uv, 0–1 across it).
    @location(1) within: vec2<f32>,
    /// The card's `shade_terms` (its tint, fogged at its centre; in member ids mode `base` is
    /// the member's colour) and the light in the card's own frame (turned by minus its yaw):
    /// the baked normals are in that frame, so each pixel shades without turning its normal.
    @location(0) @interpolate(flat) base: vec3<f32>,
    @location(2) @interpolate(flat) slope: vec3<f32>,
    @location(3) @interpolate(flat) lit: vec3<f32>,
    @location(7) @interpolate(flat) light: vec3<f32>,
    /// The four cells' column and row in the atlas (`cell_at`): (first frame, view a), (first,
    /// view b), (next frame, view a), (next, view b).
    @location(4) @interpolate(flat) cells: vec4<u32>,
    /// `pack_card`: the frame mix, the view mix (toward view b) and the card's share of the
    /// member in bytes, the pixel its dithers are anchored at (`anchor_of` its centre), and the
    /// mip level it reads (log2 of texels per pixel at its centre, `card_rho`, rounded: the
    /// sampler's nearest level; explicit, not from derivatives, as neighbouring pixels may read
    /// different cells). Packed: a CPU driver pays per interpolant and triangle, and a card is
    /// two triangles over a few pixels.
    @location(5) @interpolate(flat) packed: u32,
    /// How far the depth buffer's value moves per card half size toward the eye, at the card's
    /// centre (`card_fs` adds the texel's offset times it to the card plane's depth).
    @location(6) @interpolate(flat) reach: f32,
}

/// The baked row nearest to elevation `elevation` (radians), and the two views around the
/// azimuth of unit direction `d` (component space) with how far toward the second it lies
/// (impostor.rs `Impostor::nearest_view` is the view of the larger share).
fn views_around(d: vec3<f32>) -> vec4<f32> {
    let tau = 6.2831853;
    let step = tau / f32(atlas.views);
    var azimuth = atan2(d.x, d.z);
    if azimuth < 0.0 {
        azimuth += tau;
    }
    let x = azimuth / step;
    let a = u32(floor(x)) % atlas.views;
    let b = (a + 1u) % atlas.views;
    let elevation = asin(clamp(d.y, -1.0, 1.0));
    var row = 0u;
    var best = 1e9;
    for (var r = 0u; r < atlas.rows; r++) {
        let e = abs(atlas.elevations[r / 4u][r % 4u] - elevation);
        if e < best {
            best = e;
            row = r;
        }
    }
    return vec4<f32>(f32(row), f32(a), f32(b), clamp(x - floor(x), 0.0, 1.0));
}

/// Full-size atlas texels per pixel across a card whose centre is at clip position `c` and
/// whose half sides along right and up span clip vectors `to_right` and `to_up`, along its
/// narrower projected side (a cell's side if it is behind the eye).
fn card_rho(c: vec4<f32>, to_right: vec4<f32>, to_up: vec4<f32>) -> f32 {
    let r = c + to_right;
    let u = c + to_up;
    let cell = f32(atlas.cell);
    if min(c.w, min(r.w, u.w)) <= 1e-6 {
        return cell;
    }
    let pixels = 0.5 * frame.motion.xy;
    let to_r = (r.xy / r.w - c.xy / c.w) * pixels;
    let to_u = (u.xy / u.w - c.xy / c.w) * pixels;
    let side = 2.0 * min(length(to_r), length(to_u));
    return cell / max(side, 1e-6);
}

/// Cell `cell`'s column and row in the atlas, as column | row << 16.
fn cell_at(cell: u32) -> u32 {
    // In f32 (exact for the atlas's few thousand cells): an integer division by a value not
    // known at compile time is a scalar loop per lane on a CPU driver.
    let columns = f32(atlas.columns);
    let row = floor((f32(cell) + 0.5) / columns);
    return u32(f32(cell) - row * columns) | (u32(row) << 16u);
}

/// The blends (0–1), anchor and mip level of a card in one word (`CardVarying::packed`).
fn pack_card(blends: vec3<f32>, anchor: vec2<u32>, level: f32) -> u32 {
    let b = vec3<u32>(round(clamp(blends, vec3<f32>(0.0), vec3<f32>(1.0)) * 255.0));
    let l = u32(clamp(floor(level + 0.5), 0.0, 15.0));
    return b.x | (b.y << 8u) | (b.z << 16u) | (anchor.x << 24u) | (anchor.y << 26u) | (l << 28u);
}

/// The union of two covered rectangles (x0 > x1: empty).
fn rect_union(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    if a.x > a.z {
        return b;
    }
    if b.x > b.z {
        return a;
    }
    return vec4<f32>(min(a.xy, b.xy), max(a.zw, b.zw));
}

/// Card `card` at strip vertex `v`, and the vertex's scene position in `world` (`card_vs`;
/// `card_motion_vs` adds where it was).
fn card_at(v: u32, card: Card, world: ptr<function, vec3<f32>>) -> CardVarying {
    var d = frame.eye.xyz - card.centre;
    d = select(vec3<f32>(0.0, 0.0, 1.0), normalize(d), dot(d, d) > 1e-12);
    var right = cross(vec3<f32>(0.0, 1.0, 0.0), d);
    right = select(vec3<f32>(1.0, 0.0, 0.0), normalize(right), dot(right, right) > 1e-12);
    let up = cross(d, right);
    let half = atlas.radius * card.scale;
    let c = cos(card.yaw);
    let s = sin(card.yaw);
    let local = vec3<f32>(c * d.x - s * d.z, d.y, s * d.x + c * d.z);
    let around = views_around(local);
    let base = u32(around.x) * atlas.views;
    let va = base + u32(around.y);
    let vb = base + u32(around.z);
    // The four cells' covered rectangles together: each pixel may read any of them.
    let rect = rect_union(
        rect_union(rects[card.first + va], rects[card.first + vb]),
        rect_union(rects[card.next + va], rects[card.next + vb]),
    );
    // The card's centre and its half sides in clip space: each vertex's position, the mip
    // level, the dither's anchor and the depth's reach from four products, not seven.
    let c_clip = frame.view_proj * vec4<f32>(card.centre, 1.0);
    let to_right = frame.view_proj * vec4<f32>(right * half, 0.0);
    let to_up = frame.view_proj * vec4<f32>(up * half, 0.0);
    // The margin the sampler can reach past the covered rectangle (the comment above).
    let rho = card_rho(c_clip, to_right, to_up);
    let grow = 2.0 * max(2.0, 2.0 * rho) / f32(atlas.cell);
    let low = clamp(rect.xy - grow, vec2<f32>(-1.0), vec2<f32>(1.0));
    let high = clamp(rect.zw + grow, vec2<f32>(-1.0), vec2<f32>(1.0));
    // Strip order: (low, low), (high, low), (low, high), (high, high); empty cells collapse.
    var corner = select(low, high, vec2<bool>((v & 1u) != 0u, (v & 2u) != 0u));
    corner = select(vec2<f32>(0.0), corner, rect.x <= rect.z);
    *world = card.centre + (right * corner.x + up * corner.y) * half;
    var out: CardVarying;
    out.clip = c_clip + to_right * corner.x + to_up * corner.y;
    out.within = vec2<f32>(0.5 + 0.5 * corner.x, 0.5 - 0.5 * corner.y);
    // Under a tier tint every card is tinted: the caller's by their tier, the cull pass's (tier
    // 0) blue.
    let tinted = card.tier != 0u || frame.tiers.x > 0u;
    let terms = shade_terms(
        select(tint(card.slot), tier_colour(card.tier), tinted),
        fog_amount(card.centre),
    );
    out.base = terms.base;
    out.slope = terms.slope;
    out.lit = terms.lit;
    if member_ids() {
        out.base = member_colour(card.slot);
    }
    let l = frame.light.xyz;
    out.light = vec3<f32>(c * l.x - s * l.z, l.y, s * l.x + c * l.z);
    out.cells = vec4<u32>(
        cell_at(card.first + va),
        cell_at(card.first + vb),
        cell_at(card.next + va),
        cell_at(card.next + vb),
    );
    let blends = vec3<f32>(card.blend, around.w, card.fade);
    out.packed = pack_card(blends, anchor_at(c_clip), log2(max(rho, 1e-6)));
    // d(z / w) for the centre moved by `half` toward the eye, to first order: the offset is at
    // most a half size, small against the distance of a card (a far member).
    let toward = frame.view_proj * vec4<f32>(d * half, 0.0);
    let w = max(c_clip.w, 1e-6);
    out.reach = (toward.z - c_clip.z / w * toward.w) / w;
    return out;
}

@vertex
fn card_vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> CardVarying {
    var world: vec3<f32>;
    return card_at(v, cards[i], &world);
}

/// The baked texel (`bake_texel`) a card shows at pixel `pixel`, `within` its cell (0–1), of
/// its four cells and `packed` blends, anchor and level (`CardVarying`); discards the pixel
/// where the card's share or its alpha leaves it out.
fn card_texel(pixel: vec2<f32>, within: vec2<f32>, cells: vec4<u32>, packed: u32) -> vec4<f32> {
    let blends = vec3<f32>(vec3<u32>(packed, packed >> 8u, packed >> 16u) & vec3<u32>(255u));
    let anchor = vec2<u32>(packed >> 24u, packed >> 26u) & vec2<u32>(3u);
    let level = f32(packed >> 28u);
    let shares = blends / 255.0;
    if dither(pixel, anchor, vec2<u32>(0u)) >= shares.z {
        discard;
    }
    let by_frame = dither(pixel, anchor, vec2<u32>(1u, 2u)) < shares.x;
    let pair = select(cells.xy, cells.zw, by_frame);
    let by_view = dither(pixel, anchor, vec2<u32>(2u, 1u)) < shares.y;
    let cell = select(pair.x, pair.y, by_view);
    let corner = vec2<f32>(f32(cell & 0xffffu), f32(cell >> 16u));
    let uv = (corner + within) * atlas.cell_uv;
    let texel = textureSampleLevel(atlas_texture, atlas_sampler, uv, level);
    if texel.a < 0.5 {
        discard;
    }
    return texel;
}

/// A card's colour and depth: each pixel at the depth its texel's surface lies at, the texel's
/// offset from the card's centre (baked toward the bake camera) taken along the direction to
/// the eye (to first order: `reach`), so overlapping cards and meshes occlude each other pixel
/// by pixel as their members do, not all at once where their centres pass.
struct CardFragment {
    @location(0) colour: vec4<f32>,
    @builtin(frag_depth) depth: f32,
}

@fragment
fn card_fs(in: CardVarying) -> CardFragment {
    let texel = card_texel(in.clip.xy, in.within, in.cells, in.packed);
    let o = 2.0 * texel.b - 1.0;
    var out: CardFragment;
    out.depth = clamp(in.clip.z + o * in.reach, 0.0, 1.0);
    if member_ids() {
        out.colour = vec4<f32>(in.base, 1.0);
        return out;
    }
    let n = oct_unwrap(texel.rg * 2.0 - 1.0).xzy;
    let lit = in.lit * max(dot(n, in.light), 0.0);
    out.colour = vec4<f32>(in.base + in.slope * n.y + lit, 1.0);
    return out;
}

// Motion vectors of cards: the card as `card_vs` places it now and, through the previous
// view-projection, moved back by how far its centre moved since the last frame's cards
// (`card_before`, per frame slot; a member that was no card the frame before moves with the
// camera only); the silhouette is the card's own (`card_texel`).

/// Per frame slot, its card's centre in the last frame's cards (w = 1), or none (w = 0).
@group(2) @binding(5) var<storage, read> card_before: array<vec4<f32>>;

struct CardMotionVarying {
    @builtin(position) clip: vec4<f32>,
    @location(1) within: vec2<f32>,
    @location(4) @interpolate(flat) cells: vec4<u32>,
    @location(5) @interpolate(flat) packed: u32,
    @location(8) now: vec4<f32>,
    @location(9) before: vec4<f32>,
}

@vertex
fn card_motion_vs(
    @builtin(vertex_index) v: u32,
    @builtin(instance_index) i: u32,
) -> CardMotionVarying {
    let card = cards[i];
    var world: vec3<f32>;
    let at = card_at(v, card, &world);
    var moved = vec3<f32>(0.0);
    if card.slot < arrayLength(&card_before) {
        let b = card_before[card.slot];
        if b.w > 0.5 {
            moved = card.centre - b.xyz;
        }
    }
    var out: CardMotionVarying;
    out.clip = at.clip;
    out.within = at.within;
    out.cells = at.cells;
    out.packed = at.packed;
    out.now = at.clip;
    out.before = frame.previous_view_proj * vec4<f32>(world - moved, 1.0);
    return out;
}

@fragment
fn card_motion_fs(in: CardMotionVarying) -> @location(0) vec4<f32> {
    _ = card_texel(in.clip.xy, in.within, in.cells, in.packed);
    return motion_colour(in.now, in.before);
}

struct GroundVarying {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
}

@vertex
fn ground_vs(@builtin(vertex_index) v: u32) -> GroundVarying {
    // Two triangles: (0,0) (1,0) (1,1), (0,0) (1,1) (0,1), counter-clockwise seen from above.
    let corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, 1.0), vec2<f32>(1.0, 1.0), vec2<f32>(1.0, -1.0),
        vec2<f32>(-1.0, 1.0), vec2<f32>(1.0, -1.0), vec2<f32>(-1.0, -1.0),
    );
    let c = corners[v % 6u] * frame.ground.y;
    let world = vec3<f32>(frame.centre.x + c.x, frame.ground.x, frame.centre.z + c.y);
    var out: GroundVarying;
    out.clip = frame.view_proj * vec4<f32>(world, 1.0);
    out.world = world;
    return out;
}

@fragment
fn ground_fs(in: GroundVarying) -> @location(0) vec4<f32> {
    let cell = in.world.xz / frame.ground.z;
    let width = fwidth(cell);
    let distance_to_line = abs(fract(cell - 0.5) - 0.5) / max(width, vec2<f32>(1e-6));
    let line = 1.0 - clamp(min(distance_to_line.x, distance_to_line.y), 0.0, 1.0);
    let albedo = mix(vec3<f32>(0.16, 0.16, 0.15), vec3<f32>(0.07, 0.07, 0.07), line);
    if member_ids() {
        return vec4<f32>(member_colour(NO_MEMBER), 1.0);
    }
    return vec4<f32>(fog(shade(albedo, vec3<f32>(0.0, 1.0, 0.0)), in.world), 1.0);
}

struct MotionVarying {
    @builtin(position) clip: vec4<f32>,
    @location(0) now: vec4<f32>,
    @location(1) before: vec4<f32>,
}

// Motion vectors: the same draws as the crowd, each vertex at its position now and at its
// previous position through the previous view-projection; the fragment writes the screen-space
// motion now − before in pixels (+x right, +y down), encoded as `0.5 + motion / (2 · range)` in
// red and green (0.5, 0.5: still), clamped to [0, 1].
@vertex
fn motion_vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> MotionVarying {
    let k = ranks[draw.first_at] + i;
    let s = skinned[k * draw.stride + v];
    // The level's shell (`crowd_vertex`) along the normal of now, at both positions.
    let shell = decode_normal(s.w) * draw.shell;
    let position = bitcast<vec3<f32>>(s.xyz) + shell;
    var out: MotionVarying;
    out.clip = frame.view_proj * vec4<f32>(position, 1.0);
    out.now = out.clip;
    let before = previous[k * draw.stride + v].xyz + shell;
    out.before = frame.previous_view_proj * vec4<f32>(before, 1.0);
    return out;
}

@fragment
fn motion_fs(in: MotionVarying) -> @location(0) vec4<f32> {
    return motion_colour(in.now, in.before);
}

/// The encoded screen-space motion from clip position `before` to `now` (above).
fn motion_colour(now: vec4<f32>, before: vec4<f32>) -> vec4<f32> {
    let ndc = now.xy / now.w - before.xy / before.w;
    let pixels = ndc * vec2<f32>(0.5 * frame.motion.x, -0.5 * frame.motion.y);
    let encoded = clamp(0.5 + pixels / (2.0 * frame.motion.z), vec2<f32>(0.0), vec2<f32>(1.0));
    return vec4<f32>(encoded, 0.0, 1.0);
}
