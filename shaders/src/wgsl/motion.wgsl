// Motion vectors (throng-cpu-ref `motion`): skinning.wgsl's `motion` hook writes each vertex's
// previous position: the vertex skinned with its slot's last palette (`last_palettes`, copied
// from the palettes at the end of the last frame) and placed with its last placement, or its
// current position when its slot resets (`resets`, decided on the host by `MotionResets`).
// `p` is the bind-space position, `position` the one just skinned, `out` the pool slot.
fn motion(out: u32, slot: u32, v: u32, joints: vec4<u32>, w: vec4<f32>, p: vec3<f32>, position: vec3<f32>, skin_len: u32) {
    var previous = position;
    if resets[slot] == 0u {
        var m = Affine(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
        for (var k = 0u; k < 4u; k++) {
            if w[k] != 0.0 && joints[k] < skin_len {
                let q = load_last_palettes(slot, joints[k]);
                m = Affine(m.r0 + q.r0 * w[k], m.r1 + q.r1 * w[k], m.r2 + q.r2 * w[k]);
            }
        }
        let pa = 3u * slot;
        let placement = Affine(last_placements[pa], last_placements[pa + 1u], last_placements[pa + 2u]);
        previous = affine_point(placement, affine_point(m, p));
    }
    store_previous(out, v, vec4<f32>(previous, 1.0));
}
