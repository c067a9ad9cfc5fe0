var<workgroup> lane_counts: array<u32, WORKGROUP>;

/// Each lane's `count`: the sum over the lanes before `lane` (x) and over all lanes (y). Call it
/// in uniform control flow: it synchronises the workgroup before and after reading.
fn lane_sums(count: u32, lane: u32) -> vec2<u32> {
    lane_counts[lane] = count;
    workgroupBarrier();
    var before = 0u;
    var total = 0u;
    for (var l = 0u; l < WORKGROUP; l++) {
        let k = lane_counts[l];
        before += select(0u, k, l < lane);
        total += k;
    }
    workgroupBarrier();
    return vec2<u32>(before, total);
}
