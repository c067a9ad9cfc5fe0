// Indirect arguments from the visible counts of the bounds pass: one thread per row of `table`.
// Rows `0 .. batches` are skinned batches `(counter, vertex workgroups, _, _)`: their skinning
// dispatch (x = vertex workgroups, y = min(visible, rows), z = ceil(visible / rows)) goes to
// `indirect[3 t ..]`. The next `runs` rows are skinned runs (a batch's slots on one page of the
// skinned stream) `(counter, first instance of the run within the batch, instances, indices)`:
// their indexed draw (indices, instances visible in the run, 0, 0, 0) goes to
// `indirect[draw_base + 5 r ..]`.

/// Host mirror: `IndirectParams`.
struct IndirectParams {
    batches: u32,
    runs: u32,
    /// Most workgroups per dimension.
    rows: u32,
    draw_base: u32,
}

@group(0) @binding(0) var<uniform> params: IndirectParams;
@group(0) @binding(1) var<storage, read> counters: array<u32>;
@group(0) @binding(2) var<storage, read> table: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> indirect: array<u32>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    if t >= params.batches + params.runs {
        return;
    }
    let row = table[t];
    let visible = counters[row.x];
    if t < params.batches {
        indirect[3u * t] = row.y;
        indirect[3u * t + 1u] = min(visible, params.rows);
        indirect[3u * t + 2u] = (visible + params.rows - 1u) / params.rows;
        return;
    }
    let at = params.draw_base + 5u * (t - params.batches);
    indirect[at] = row.w;
    indirect[at + 1u] = select(0u, min(visible - row.y, row.z), visible > row.y);
    indirect[at + 2u] = 0u;
    indirect[at + 3u] = 0u;
    indirect[at + 4u] = 0u;
}
