/* Global CSR assembly, Dirichlet conditions and Jacobi-preconditioned conjugate gradients
 * (`clforge_runtime::fem::sparse`). A matrix is `row_ptr[n + 1]`, `cols[nnz]` (sorted within
 * each row), `values[nnz]`. The host checks that `n`, `nnz`, the element-matrix store and
 * every global size fit 31 bits, so `uint` arithmetic here never wraps. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

/* Position of `col` in row `row` (binary search of the sorted columns), or -1. */
static int sparse_find(__global const uint* row_ptr, __global const uint* cols, uint row, uint col)
{
    uint lo = row_ptr[row], hi = row_ptr[row + 1];
    while (lo < hi) {
        const uint mid = lo + (hi - lo) / 2;
        const uint c = cols[mid];
        if (c == col) return (int)mid;
        if (c < col) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* The sum of `v` over the work-group (a power of two), valid in work-item 0 only. The leading
 * barrier lets one kernel call it twice on the same scratch. */
static double sparse_group_sum(__local double* scratch, double v)
{
    const uint l = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return scratch[0];
}

/* One work-item per (element of one colour, local row i): adds row i of S K_e S (S the
 * element's signs) to global row index[i]. K_e is stored as its packed lower triangle, so
 * entry (i, j) is read at (max, min). Elements of one colour share no global DOF, and one
 * element's DOFs are distinct, so no two work-items of a launch touch one row: plain `+=`. */
__kernel void sparse_assemble(__global const uint* row_ptr, __global const uint* cols, __global double* values,
                              __global const double* ke, __global const uint* index, __global const double* sign,
                              __global const uint* order, const uint first, const uint count, const uint ne,
                              const uint packed)
{
    const uint w = get_global_id(0);
    if (w >= count * ne) return;
    const uint e = order[first + w / ne];
    const uint i = w % ne;
    const uint base = e * ne;
    const uint row = index[base + i];
    const double si = sign[base + i];
    const uint k0 = e * packed;
    for (uint j = 0; j < ne; ++j) {
        const uint a = max(i, j), b = min(i, j);
        const int at = sparse_find(row_ptr, cols, row, index[base + j]);
        if (at >= 0) values[at] += si * sign[base + j] * ke[k0 + a * (a + 1) / 2 + b];
    }
}

/* diag[r] = A[r][r] (0 where the pattern has no diagonal). */
__kernel void sparse_diagonal(__global const uint* row_ptr, __global const uint* cols, __global const double* values,
                              __global double* diag, const uint n)
{
    const uint r = get_global_id(0);
    if (r >= n) return;
    const int at = sparse_find(row_ptr, cols, r, r);
    diag[r] = at >= 0 ? values[at] : 0.0;
}

/* Dirichlet conditions, one work-item per row. A fixed row keeps only its diagonal and gets
 * b = A_rr g_r; a free row lifts b_r -= A_rc g_c over its fixed columns c (in column order)
 * and zeroes them. Each work-item writes its own row only. */
__kernel void sparse_dirichlet(__global const uint* row_ptr, __global const uint* cols, __global double* values,
                               __global const uchar* fixed, __global const double* g, __global double* b,
                               const uint n)
{
    const uint r = get_global_id(0);
    if (r >= n) return;
    const uint lo = row_ptr[r], hi = row_ptr[r + 1];
    if (fixed[r]) {
        double d = 0.0;
        for (uint k = lo; k < hi; ++k) {
            if (cols[k] == r) d = values[k];
            else values[k] = 0.0;
        }
        b[r] = d * g[r];
    } else {
        double acc = b[r];
        for (uint k = lo; k < hi; ++k) {
            const uint c = cols[k];
            if (fixed[c]) {
                acc -= values[k] * g[c];
                values[k] = 0.0;
            }
        }
        b[r] = acc;
    }
}

/* q = A p, one row per work-item, and the work-group's part of p·q in partial[group]. */
__kernel void sparse_spmv_dot(__global const uint* row_ptr, __global const uint* cols, __global const double* values,
                              __global const double* p, __global double* q, __global double* partial,
                              __local double* scratch, const uint n)
{
    const uint r = get_global_id(0);
    double pq = 0.0;
    if (r < n) {
        double s = 0.0;
        for (uint k = row_ptr[r]; k < row_ptr[r + 1]; ++k) s += values[k] * p[cols[k]];
        q[r] = s;
        pq = p[r] * s;
    }
    const double sum = sparse_group_sum(scratch, pq);
    if (get_local_id(0) == 0) partial[get_group_id(0)] = sum;
}

/* The start of CG from q = A x: r = b - q, z = r / diag, p = z; partial[2 group] and
 * partial[2 group + 1] get the work-group's parts of r·z and r·r. */
__kernel void sparse_cg_start(__global const double* b, __global const double* q, __global const double* diag,
                              __global double* r, __global double* z, __global double* p,
                              __global double* partial, __local double* scratch, const uint n)
{
    const uint i = get_global_id(0);
    double rz = 0.0, rr = 0.0;
    if (i < n) {
        const double ri = b[i] - q[i];
        const double zi = ri / diag[i];
        r[i] = ri;
        z[i] = zi;
        p[i] = zi;
        rz = ri * zi;
        rr = ri * ri;
    }
    const double s0 = sparse_group_sum(scratch, rz);
    if (get_local_id(0) == 0) partial[2 * get_group_id(0)] = s0;
    const double s1 = sparse_group_sum(scratch, rr);
    if (get_local_id(0) == 0) partial[2 * get_group_id(0) + 1] = s1;
}

/* One CG step after q = A p: x += alpha p, r -= alpha q, z = r / diag, with the work-group's
 * parts of r·z and r·r as in `sparse_cg_start`. */
__kernel void sparse_cg_update(__global double* x, __global double* r, __global double* z, __global const double* p,
                               __global const double* q, __global const double* diag, const double alpha,
                               __global double* partial, __local double* scratch, const uint n)
{
    const uint i = get_global_id(0);
    double rz = 0.0, rr = 0.0;
    if (i < n) {
        x[i] += alpha * p[i];
        const double ri = r[i] - alpha * q[i];
        const double zi = ri / diag[i];
        r[i] = ri;
        z[i] = zi;
        rz = ri * zi;
        rr = ri * ri;
    }
    const double s0 = sparse_group_sum(scratch, rz);
    if (get_local_id(0) == 0) partial[2 * get_group_id(0)] = s0;
    const double s1 = sparse_group_sum(scratch, rr);
    if (get_local_id(0) == 0) partial[2 * get_group_id(0) + 1] = s1;
}

/* The next search direction: p = z + beta p. */
__kernel void sparse_cg_direction(__global double* p, __global const double* z, const double beta, const uint n)
{
    const uint i = get_global_id(0);
    if (i < n) p[i] = z[i] + beta * p[i];
}

/* BiCGStab's vector operations (preconditioned by the diagonal). */

/* q = A p, one row per work-item. */
__kernel void sparse_spmv(__global const uint* row_ptr, __global const uint* cols, __global const double* values,
                          __global const double* p, __global double* q, const uint n)
{
    const uint r = get_global_id(0);
    if (r >= n) return;
    double s = 0.0;
    for (uint k = row_ptr[r]; k < row_ptr[r + 1]; ++k) s += values[k] * p[cols[k]];
    q[r] = s;
}

/* The work-group's parts of a·b and c·d in partial[2 group] and partial[2 group + 1]. */
__kernel void sparse_dot2(__global const double* a, __global const double* b, __global const double* c,
                          __global const double* d, __global double* partial, __local double* scratch, const uint n)
{
    const uint i = get_global_id(0);
    const double ab = i < n ? a[i] * b[i] : 0.0;
    const double cd = i < n ? c[i] * d[i] : 0.0;
    const double s0 = sparse_group_sum(scratch, ab);
    if (get_local_id(0) == 0) partial[2 * get_group_id(0)] = s0;
    const double s1 = sparse_group_sum(scratch, cd);
    if (get_local_id(0) == 0) partial[2 * get_group_id(0) + 1] = s1;
}

/* r = b - q (q = A x), rhat = r. */
__kernel void sparse_bicg_start(__global const double* b, __global const double* q, __global double* r,
                                __global double* rhat, const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const double ri = b[i] - q[i];
    r[i] = ri;
    rhat[i] = ri;
}

/* p = r + beta (p - omega v); y = p / diag. */
__kernel void sparse_bicg_direction(__global double* p, __global const double* r, __global const double* v,
                                    __global double* y, __global const double* diag, const double beta,
                                    const double omega, const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const double pi = r[i] + beta * (p[i] - omega * v[i]);
    p[i] = pi;
    y[i] = pi / diag[i];
}

/* s = r - alpha v; z = s / diag. */
__kernel void sparse_bicg_half(__global double* s, __global const double* r, __global const double* v,
                               __global double* z, __global const double* diag, const double alpha, const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const double si = r[i] - alpha * v[i];
    s[i] = si;
    z[i] = si / diag[i];
}

/* x += alpha y + omega z; r = s - omega t. */
__kernel void sparse_bicg_update(__global double* x, __global double* r, __global const double* y,
                                 __global const double* z, __global const double* s, __global const double* t,
                                 const double alpha, const double omega, const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    x[i] += alpha * y[i] + omega * z[i];
    r[i] = s[i] - omega * t[i];
}

/* GMRES's vector operations: the Krylov basis V holds k vectors of n, vector i at V + i n. */

/* partial[k group + i] = the work-group's part of V_i · w, i < k. */
__kernel void sparse_multidot(__global const double* V, __global const double* w, __global double* partial,
                              __local double* scratch, const uint k, const uint n)
{
    const uint r = get_global_id(0);
    const double wr = r < n ? w[r] : 0.0;
    for (uint i = 0; i < k; ++i) {
        const double s = sparse_group_sum(scratch, r < n ? V[(size_t)i * n + r] * wr : 0.0);
        if (get_local_id(0) == 0) partial[k * get_group_id(0) + i] = s;
    }
}

/* w -= sum_i h[i] V_i, i < k (one Gram-Schmidt pass). */
__kernel void sparse_gs_update(__global const double* V, __global double* w, __global const double* h,
                               const uint k, const uint n)
{
    const uint r = get_global_id(0);
    if (r >= n) return;
    double s = w[r];
    for (uint i = 0; i < k; ++i) s -= h[i] * V[(size_t)i * n + r];
    w[r] = s;
}

/* V_j = a w. */
__kernel void sparse_set_basis(__global double* V, __global const double* w, const double a, const uint j,
                               const uint n)
{
    const uint r = get_global_id(0);
    if (r < n) V[(size_t)j * n + r] = a * w[r];
}

/* z = V_j / diag (the right preconditioner). */
__kernel void sparse_precondition(__global double* z, __global const double* V, __global const double* diag,
                                  const uint j, const uint n)
{
    const uint r = get_global_id(0);
    if (r < n) z[r] = V[(size_t)j * n + r] / diag[r];
}

/* x += (sum_i y[i] V_i) / diag, i < k. */
__kernel void sparse_gmres_update(__global double* x, __global const double* V, __global const double* y,
                                  __global const double* diag, const uint k, const uint n)
{
    const uint r = get_global_id(0);
    if (r >= n) return;
    double s = 0.0;
    for (uint i = 0; i < k; ++i) s += y[i] * V[(size_t)i * n + r];
    x[r] += s / diag[r];
}

/* w = b - q. */
__kernel void sparse_residual(__global const double* b, __global const double* q, __global double* w, const uint n)
{
    const uint r = get_global_id(0);
    if (r < n) w[r] = b[r] - q[r];
}
