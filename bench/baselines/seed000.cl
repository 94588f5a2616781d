/*
 * Baseline for clforge-bench's `elements` suite: the OpenCL C kernels of seed 000's appendix,
 * ported (they were OpenCL already) with only the changes needed to compile and to launch them.
 *
 * Seed 000: master's thesis (Lithuanian) on explicit FEM elastic waves on GPUs,
 * /work/shared/seeds/000_385c459de58a9b7b.txt:
 *   section 5.3.1  algorithm 1: 4 colours of elements with no common node (figure 6), node
 *                  indices loaded (appendix 10.2.1, `apply_element_forces`);
 *   section 5.3.2  node integration v += F M^-1 dt; u += v dt; F = C v (appendix 10.1, `integrate`);
 *   section 5.3.4  algorithm 2: node indices computed (appendix 10.2.2, `apply_element_forces_cnidx`);
 *   section 5.4    algorithm 3: coloured blocks, each work-item walking WI_SIZE elements up a
 *                  column with register shifting (appendix 10.2.3); table 1: n_wi = 8 is best at 2M;
 *   section 5.5    algorithm 4: per-block K_e/G_e and crack bit masks staged in local memory
 *                  with async_work_group_copy, L_x 16 x L_y 4 x WI_SIZE 8 = 512-element blocks
 *                  (appendix 10.2.4); table 2: 3.23 s (alg. 3) and 3.79 s (alg. 4) for 1000
 *                  steps of 2M elements on a Radeon HD6850.
 *
 * The appendix kernels 10.2.1-10.2.4 share kernel names, so one algorithm is compiled per
 * program: build with -D ALGORITHM=1..4 (`integrate` is in every program).
 *
 * Changes, each because the listing as printed does not compile (or cannot be launched):
 *   - sum_v8: the listing's macro lost its line continuation, so it sums 4 lanes and leaves
 *     `+ ((v.s4 + v.s5) + (v.s6 + v.s7))` as a stray line. Used here: the 8-lane pairwise sum
 *     the text (section 4.2) describes. Appendix 10.2.4 uses sum_v8 without defining it: the
 *     same macro is defined once for all algorithms.
 *   - write() of algorithms 3 and 4 lost a line continuation the same way (after
 *     `+= F.s01;`); joined.
 *   - algorithm 3: `#ifdef L_y` / `#ifdef WI_SIZE` (which leave L_y and WI_SIZE undefined) read
 *     as the evident `#ifndef` defaults.
 *   - algorithm 2: `const uint4 elem_node_indices = 0;` is then assigned to; `const` dropped.
 *   - algorithm 4: the `NULL` event arguments of async_work_group_copy are written `0` (an
 *     event_t cannot be initialised from a pointer; PoCL/clang reject NULL there).
 *   - apply_external_forces: FORCE_TYPE_EDGE is not printed; defined below (not timed).
 *   - the `uint2` shift arguments (elem_idx_shift, group_shift) are passed as two `uint`s and
 *     rebuilt as the `uint2` on the kernel's first line: clforge's Program::launch passes scalar
 *     arguments only. The kernel bodies are unchanged.
 * Everything else is as printed, including what is odd but compiles: the unused elem_nodes
 * argument of algorithm 2, `uint node_idx_bottom = 0.0f`, the 3-iteration loop recomputing the
 * same stresses, and algorithm 4's `(wi_mask >> wi_id) ? 0.0f : 1.0f` (tests all higher bits,
 * not bit wi_id: right only when the block has no cracks, as in the bench). Work sizes as in
 * the seed: algorithms 1-2 in 8 x 8 work-groups over (nx/2, ny/2) per colour; algorithm 3 with
 * its defaults L_x 32, L_y 2, WI_SIZE 8; algorithm 4 with its fixed 16 x 4 x 8. Contraction of
 * a*b+c into FMA is left to the compiler (the seed set no option).
 */
#define FORCE_TYPE_EDGE 1

/* section 4.2: pairwise sum of the 8 lanes of a float8 (see the header) */
#define sum_v8(v) ((v.s0 + v.s1) + (v.s2 + v.s3)) \
                + ((v.s4 + v.s5) + (v.s6 + v.s7))

/* appendix 10.1: the 3rd stage of the step (node integration) */
kernel void integrate(
    const float dt,
    const global float2 * node_masses,
    const global float2 * node_dampness,
    global float2 * node_forces,
    global float2 * node_speeds,
    global float2 * node_shifts)
{
    uint g_id = get_global_id(0);
    float2 speed = node_speeds[g_id]
        + node_forces[g_id] * node_masses[g_id] * dt;
    float2 shift = node_shifts[g_id] + speed * dt;
    float2 force = node_dampness[g_id] * speed;
    node_speeds[g_id] = speed;
    node_shifts[g_id] = shift;
    node_forces[g_id] = force;
}

#if ALGORITHM == 1
/* appendix 10.2.1: algorithm 1 */
kernel void apply_external_forces(
    int force_type,
    float force_strength,
    global float2 * node_forces)
{
    const uint g_id = get_global_id(0);
    if (force_type == FORCE_TYPE_EDGE) {
        node_forces[g_id].y += force_strength;
    }
    else {
        const uint g_size_half = get_global_size(0) / 2;
        if (g_size_half == g_id) {
            node_forces[g_id].y += force_strength;
        }
    }
}

kernel __attribute__((reqd_work_group_size(8, 8, 1)))
void apply_element_forces(
    const int calculate_stresses,
    const uint elem_idx_shift_x, const uint elem_idx_shift_y,
    constant float8 * rows_K,
    constant float8 * rows_G,
    const global uint4 * elem_nodes,
    const global float2 * node_shifts,
    global float2 * node_forces,
    global float * elem_stresses)
{
    const uint2 elem_idx_shift = (uint2)(elem_idx_shift_x, elem_idx_shift_y);
    const uint elem_x = 2 * get_global_id(0) + elem_idx_shift.x;
    const uint elem_y = 2 * get_global_id(1) + elem_idx_shift.y;
    const uint elem_idx = elem_y * get_global_size(0) * 2 + elem_x;

    const uint4 elem_node_indices = elem_nodes[elem_idx];

    float8 U = 0.0f;
    U.s01 = node_shifts[elem_node_indices.x];
    U.s23 = node_shifts[elem_node_indices.y];
    U.s45 = node_shifts[elem_node_indices.z];
    U.s67 = node_shifts[elem_node_indices.w];

    float8 KxU = 0.0f;
    float8 tmp = 0.0f;
    tmp = rows_K[0] * U; KxU.s0 = sum_v8(tmp);
    tmp = rows_K[1] * U; KxU.s1 = sum_v8(tmp);
    tmp = rows_K[2] * U; KxU.s2 = sum_v8(tmp);
    tmp = rows_K[3] * U; KxU.s3 = sum_v8(tmp);
    tmp = rows_K[4] * U; KxU.s4 = sum_v8(tmp);
    tmp = rows_K[5] * U; KxU.s5 = sum_v8(tmp);
    tmp = rows_K[6] * U; KxU.s6 = sum_v8(tmp);
    tmp = rows_K[7] * U; KxU.s7 = sum_v8(tmp);

    node_forces[elem_node_indices.x] -= KxU.s01;
    node_forces[elem_node_indices.y] -= KxU.s23;
    node_forces[elem_node_indices.z] -= KxU.s45;
    node_forces[elem_node_indices.w] -= KxU.s67;

    if (calculate_stresses == 1) {
        float4 SIGMA = 0.0f;
        for (int row = 0; row < 3; row++) {
            float8 tmp = 0.0f;
            tmp = rows_G[0] * U; SIGMA.s0 = sum_v8(tmp);
            tmp = rows_G[1] * U; SIGMA.s1 = sum_v8(tmp);
            tmp = rows_G[2] * U; SIGMA.s2 = sum_v8(tmp);
        }
        elem_stresses[elem_idx] = length(SIGMA.s01);
    }
}
#endif

#if ALGORITHM == 2
/* appendix 10.2.2: algorithm 2 */
kernel __attribute__((reqd_work_group_size(8, 8, 1)))
void apply_element_forces_cnidx(
    const int calculate_stresses,
    const uint elem_idx_shift_x, const uint elem_idx_shift_y,
    constant float8 * rows_K,
    constant float8 * rows_G,
    const global uint4 * elem_nodes,
    const global float2 * node_shifts,
    global float2 * node_forces,
    global float * elem_stresses)
{
    const uint2 elem_idx_shift = (uint2)(elem_idx_shift_x, elem_idx_shift_y);
    const uint elems_in_row = get_global_size(0) * 2;
    const uint nodes_in_row = elems_in_row + 1;
    const uint elem_x = 2 * get_global_id(0) + elem_idx_shift.x;
    const uint elem_y = 2 * get_global_id(1) + elem_idx_shift.y;
    const uint elem_idx = elem_y * elems_in_row + elem_x;

    uint4 elem_node_indices = 0;
    elem_node_indices.x = elem_y * nodes_in_row + elem_x;
    elem_node_indices.y = elem_node_indices.x + 1;
    elem_node_indices.zw = elem_node_indices.yx + nodes_in_row;

    float8 U = 0.0f;
    U.s01 = node_shifts[elem_node_indices.x];
    U.s23 = node_shifts[elem_node_indices.y];
    U.s45 = node_shifts[elem_node_indices.z];
    U.s67 = node_shifts[elem_node_indices.w];

    float8 KxU = 0.0f;
    float8 tmp = 0.0f;
    tmp = rows_K[0] * U; KxU.s0 = sum_v8(tmp);
    tmp = rows_K[1] * U; KxU.s1 = sum_v8(tmp);
    tmp = rows_K[2] * U; KxU.s2 = sum_v8(tmp);
    tmp = rows_K[3] * U; KxU.s3 = sum_v8(tmp);
    tmp = rows_K[4] * U; KxU.s4 = sum_v8(tmp);
    tmp = rows_K[5] * U; KxU.s5 = sum_v8(tmp);
    tmp = rows_K[6] * U; KxU.s6 = sum_v8(tmp);
    tmp = rows_K[7] * U; KxU.s7 = sum_v8(tmp);

    node_forces[elem_node_indices.x] -= KxU.s01;
    node_forces[elem_node_indices.y] -= KxU.s23;
    node_forces[elem_node_indices.z] -= KxU.s45;
    node_forces[elem_node_indices.w] -= KxU.s67;

    if (calculate_stresses == 1) {
        float4 SIGMA = 0.0f;
        for (int row = 0; row < 3; row++) {
            float8 tmp = 0.0f;
            tmp = rows_G[0] * U; SIGMA.s0 = sum_v8(tmp);
            tmp = rows_G[1] * U; SIGMA.s1 = sum_v8(tmp);
            tmp = rows_G[2] * U; SIGMA.s2 = sum_v8(tmp);
        }
        elem_stresses[elem_idx] = length(SIGMA.s01);
    }
}
#endif

#if ALGORITHM == 3 || ALGORITHM == 4
#define fetch() \
    U.s67 = node_shifts[node_idx_top]; \
    U.s45 = node_shifts[node_idx_top + 1]

#define write() \
    node_forces[node_idx_bottom] += F.s01; \
barrier(CLK_GLOBAL_MEM_FENCE); \
    node_forces[node_idx_bottom + 1] += F.s23; barrier(CLK_GLOBAL_MEM_FENCE)

// register shifting: move data at top to bottom
#define shift() \
    U.s0123 = U.s6745; \
    F.s0123 = F.s6745; \
    F.s4567 = 0.0f; \
    node_idx_bottom = node_idx_top;
#endif

#if ALGORITHM == 3
/* appendix 10.2.3: algorithm 3 */
#ifndef L_x
#define L_x 32
#endif

#ifndef L_y
#define L_y 2
#endif

#ifndef WI_SIZE
#define WI_SIZE 8
#endif

kernel __attribute__((reqd_work_group_size(L_x, L_y, 1)))
void apply_element_forces(
    const int calculate_stresses,
    const uint group_shift_x, const uint group_shift_y,
    constant float8 * rows_K,
    constant float8 * rows_G,
    const global float2 * node_shifts,
    global float2 * node_forces,
    global float * elem_stresses)
{
    const uint2 group_shift = (uint2)(group_shift_x, group_shift_y);
    const uint elems_in_row = get_global_size(0) * 2;
    const uint nodes_in_row = elems_in_row + 1;
    const uint elem_x = (get_group_id(0) * 2 + group_shift.x) * L_x
        + get_local_id(0);
    uint elem_y = ((get_group_id(1) * 2 + group_shift.y) * L_y
        + get_local_id(1)) * WI_SIZE;

    uint node_idx_bottom = 0.0f;
    uint node_idx_top = 0.0f;
    float8 U = 0.0f;
    float8 F = 0.0f;
    float8 KxU = 0.0f;
    float8 tmp = 0.0f;

    // fetch the bottom data
    node_idx_top = elem_y * nodes_in_row + elem_x;
    fetch();
    shift();

    for (uint wi_id = 0; wi_id < WI_SIZE; wi_id++) {
        node_idx_top = (elem_y + 1) * nodes_in_row + elem_x;
        fetch();

        tmp = rows_K[0] * U; KxU.s0 = sum_v8(tmp);
        tmp = rows_K[1] * U; KxU.s1 = sum_v8(tmp);
        tmp = rows_K[2] * U; KxU.s2 = sum_v8(tmp);
        tmp = rows_K[3] * U; KxU.s3 = sum_v8(tmp);
        tmp = rows_K[4] * U; KxU.s4 = sum_v8(tmp);
        tmp = rows_K[5] * U; KxU.s5 = sum_v8(tmp);
        tmp = rows_K[6] * U; KxU.s6 = sum_v8(tmp);
        tmp = rows_K[7] * U; KxU.s7 = sum_v8(tmp);

        F -= KxU;

        if (calculate_stresses == 1) {
            float4 SIGMA = 0.0f;
            for (int row = 0; row < 3; row++) {
                float8 tmp = 0.0f;
                tmp = rows_G[0] * U; SIGMA.s0 = sum_v8(tmp);
                tmp = rows_G[1] * U; SIGMA.s1 = sum_v8(tmp);
                tmp = rows_G[2] * U; SIGMA.s2 = sum_v8(tmp);
            }
            elem_stresses[elem_y * elems_in_row + elem_x] = length(SIGMA.s01);
        }

        write();
        shift();
        elem_y++;
    }
    write();
}
#endif

#if ALGORITHM == 4
/* appendix 10.2.4: algorithm 4 */
#define L_x 16
#define L_y 4
#define WI_SIZE 8

kernel __attribute__((reqd_work_group_size(L_x, L_y, 1)))
void apply_element_forces(
    const int calculate_stresses,
    const uint group_shift_x, const uint group_shift_y,
    constant uint4 * control_data,
    const global uint16 * crack_mask_data,
    global float8 * g_rows_K,
    global float8 * g_rows_G,
    const global float2 * node_shifts,
    global float2 * node_forces,
    global float * elem_stresses)
{
    const uint2 group_shift = (uint2)(group_shift_x, group_shift_y);
    const uint group_x = get_group_id(0) * 2 + group_shift.x;
    const uint group_y = get_group_id(1) * 2 + group_shift.y;
    const uint l_x = get_local_id(0);
    const uint l_y = get_local_id(1);
    const uint elems_in_row = get_global_size(0) * 2;
    const uint nodes_in_row = elems_in_row + 1;
    const uint elem_x = group_x * L_x + l_x;
        uint elem_y = (group_y * L_y + l_y) * WI_SIZE;

    uint node_idx_bottom = 0.0f;
    uint node_idx_top = 0.0f;
    float8 U = 0.0f;
    float8 F = 0.0f;
    float8 KxU = 0.0f;
    float8 tmp = 0.0f;

    local uint crack_mask[L_x];
    local float8 rows_K[8];
    local float8 rows_G[3];

    uint wi_mask = 0;
    const uint4 control = control_data[group_y * get_num_groups(0) * 2
                                    + group_x];
#define matrix_index control.z
#define group_has_cracks control.x
#define mask_idx control.y

    event_t evt[2];
    evt[0] = async_work_group_copy((local float8 *) rows_K, g_rows_K +
                                    (matrix_index * 8), 8, 0);
    evt[1] = async_work_group_copy((local float8 *) rows_G, g_rows_G +
                                    (matrix_index * 3), 3, 0);

    wait_group_events(2, evt);

    if (group_has_cracks) {
        event_t evt = async_work_group_copy(
            (local uint16 *) crack_mask, crack_mask_data + mask_idx, 1, 0);
        wait_group_events(1, &evt);
        // grab the right 8 bits as a crack mask for current work item
        wi_mask = crack_mask[l_x] >> (WI_SIZE * l_y);
    }

    // fetch the bottom data
    node_idx_top = elem_y * nodes_in_row + elem_x;
    fetch();
    shift();

    for (uint wi_id = 0; wi_id < WI_SIZE; wi_id++) {
        node_idx_top = (elem_y + 1) * nodes_in_row + elem_x;
        fetch();

        tmp = rows_K[0] * U; KxU.s0 = sum_v8(tmp);
        tmp = rows_K[1] * U; KxU.s1 = sum_v8(tmp);
        tmp = rows_K[2] * U; KxU.s2 = sum_v8(tmp);
        tmp = rows_K[3] * U; KxU.s3 = sum_v8(tmp);
        tmp = rows_K[4] * U; KxU.s4 = sum_v8(tmp);
        tmp = rows_K[5] * U; KxU.s5 = sum_v8(tmp);
        tmp = rows_K[6] * U; KxU.s6 = sum_v8(tmp);
        tmp = rows_K[7] * U; KxU.s7 = sum_v8(tmp);

        const float mask_elem = (wi_mask >> wi_id) ? 0.0f : 1.0f;
        F -= mask_elem * KxU;

        if (calculate_stresses == 1) {
            float4 SIGMA = 0.0f;
            for (int row = 0; row < 3; row++) {
                float8 tmp = 0.0f;
                tmp = rows_G[0] * U; SIGMA.s0 = sum_v8(tmp);
                tmp = rows_G[1] * U; SIGMA.s1 = sum_v8(tmp);
                tmp = rows_G[2] * U; SIGMA.s2 = sum_v8(tmp);
            }
            elem_stresses[elem_y * elems_in_row + elem_x] =
                mask_elem * length(SIGMA.s01);
        }

        write();
        shift();
        elem_y++;
    }
    write();
}
#endif
