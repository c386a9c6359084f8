/* The point updates: every operator's and every solver's arithmetic at one
 * grid point, written once for the CPU engine and every CUDA kernel.
 *
 * Usable from C11 and from CUDA C++.  Each function takes VALUES (the
 * centre, sums of symmetric neighbour pairs, neighbour differences, small
 * arrays of them indexed by distance, coefficients), never a pointer into a
 * particular layout: a kernel loads and stages its data however it likes
 * (CPU rows under omp simd, CUDA global loads, shared-memory tiles,
 * registers streamed along z) and hands the values here.  Once inlined with
 * a literal radius and dimension, the code is what a hand-written
 * expression gives.  Sums over a radius or a box are chains of term()
 * that the kernels write out in the order given here (gcc 12 does not
 * vectorise a simd loop that holds a small array, so the rows pass
 * scalars); the symmetric stencils' neighbour sums come as macros over the
 * kernel's own loader (STRATA_PT_FACES6 ...) or as functions of values.
 *
 * Precision: every function exists as name_f32 (float) and name_f64
 * (double), instantiated from one body below (the file includes itself once
 * per precision).  C++ (nvcc) additionally gets the unsuffixed name
 * overloaded for float and double, for templates over T.
 *
 * Order: the sums are evaluated exactly in the order written here; the CPU
 * engine (C11, no FMA contraction) is bit-reproducible against itself
 * across kernels (a fused star heat sweep equals single strata_apply
 * steps, restarts equal uninterrupted runs), so an order change is a
 * change of results.  nvcc may contract a multiply and an add into an FMA; the GPU
 * tests compare with the CPU engine within a rounding bound.
 *
 * Arrays indexed by distance k (coefficients w[k], pair sums p[k],
 * differences d[k]) use k = 1..R, as in strata_stencil.coef; index 0 is
 * the centre coefficient or unused.  R <= STRATA_PT_MAX_RADIUS. */
#ifndef STRATA_POINT_BODY

#ifndef STRATA_POINT_H
#define STRATA_POINT_H

#define STRATA_PT_MAX_RADIUS 4

#ifdef __CUDACC__
#define STRATA_HD __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define STRATA_HD static inline __attribute__((always_inline))
#else
#define STRATA_HD static inline
#endif
/* loops over the radius unroll fully once R is a literal (gcc does so on
 * its own; nvcc is asked, also for a run-time R up to the maximum) */
#ifdef __CUDA_ARCH__
#define STRATA_PT_UNROLL _Pragma("unroll")
#else
#define STRATA_PT_UNROLL
#endif

/* Box layouts: v[(dz+1)*9 + (dy+1)*3 + (dx+1)] for the 27 points of a 3x3x3
 * box, v[(dy+1)*3 + (dx+1)] for the 9 of a 3x3 box (the layout of
 * strata_stencil.box).  The centre is v[13] (3D) or v[4] (2D). */
#define STRATA_PT_BOX27(dx, dy, dz) (((dz) + 1) * 9 + ((dy) + 1) * 3 + (dx) + 1)
#define STRATA_PT_BOX9(dx, dy) (((dy) + 1) * 3 + (dx) + 1)

/* The neighbour sums of the symmetric stencils, in their one order, over
 * V(dx, dy, dz) (3D) or V(dx, dy) (2D): a macro of the caller that loads
 * the value at that offset however the kernel stages it.  Each value is
 * loaded where it is added, which keeps register pressure as low as a
 * hand-written sum.  faces6 ... corners4 below take the same values in the
 * same order as arguments. */
#define STRATA_PT_FACES6(V)                                                    \
  (V(-1, 0, 0) + V(1, 0, 0) + V(0, -1, 0) + V(0, 1, 0) + V(0, 0, -1) +         \
   V(0, 0, 1))
#define STRATA_PT_EDGES12(V)                                                   \
  (V(-1, -1, 0) + V(1, -1, 0) + V(-1, 1, 0) + V(1, 1, 0) + V(-1, 0, -1) +      \
   V(1, 0, -1) + V(-1, 0, 1) + V(1, 0, 1) + V(0, -1, -1) + V(0, 1, -1) +       \
   V(0, -1, 1) + V(0, 1, 1))
#define STRATA_PT_CORNERS8(V)                                                  \
  (V(-1, -1, -1) + V(1, -1, -1) + V(-1, 1, -1) + V(1, 1, -1) +                 \
   V(-1, -1, 1) + V(1, -1, 1) + V(-1, 1, 1) + V(1, 1, 1))
#define STRATA_PT_FACES4(V) (V(-1, 0) + V(1, 0) + V(0, -1) + V(0, 1))
#define STRATA_PT_CORNERS4(V) (V(-1, -1) + V(1, -1) + V(-1, 1) + V(1, 1))

/* T, PT and PT_DIV name the body's type, function names and division;
 * a caller's own macros of those names are saved and restored */
#pragma push_macro("T")
#pragma push_macro("PT")
#pragma push_macro("PT_DIV")
#undef T
#undef PT
#undef PT_DIV
#define STRATA_POINT_BODY
#define T float
#define PT(name) strata__pt_##name##_f32
#if defined(__CUDA_ARCH__)
#define PT_DIV(a, b) __fdividef(a, b)
#else
#define PT_DIV(a, b) ((a) / (b))
#endif
#include "point.h"
#undef T
#undef PT
#undef PT_DIV
#define T double
#define PT(name) strata__pt_##name##_f64
#define PT_DIV(a, b) ((a) / (b))
#include "point.h"
#undef T
#undef PT
#ifdef __cplusplus
#define PT(name) strata__pt_##name
#define T double
#include "point.h"
#undef T
#undef PT_DIV
#if defined(__CUDA_ARCH__)
#define PT_DIV(a, b) __fdividef(a, b)
#else
#define PT_DIV(a, b) ((a) / (b))
#endif
#define T float
#include "point.h"
#undef T
#undef PT
#endif
#undef PT_DIV
#undef STRATA_POINT_BODY
#pragma pop_macro("PT_DIV")
#pragma pop_macro("PT")
#pragma pop_macro("T")

#endif /* STRATA_POINT_H */

#else /* STRATA_POINT_BODY: the functions, for one T and name suffix */

/* ======================================================================
 * Operators (strata_apply and the heat step)
 * ==================================================================== */

/* One weighted term: acc + w x.  Every sum over a radius or a box below is
 * a chain of these from its first value, in the order given. */
STRATA_HD T PT(term)(T acc, T w, T x) { return acc + w * x; }

/* One axis's terms of a star, for kernels that sum axis by axis:
 *   acc + sum_{k=1..R} w[k] p[k], in k order. */
STRATA_HD T PT(pairs)(int R, T acc, const T *w, const T *p) {
  STRATA_PT_UNROLL
  for (int k = 1; k <= STRATA_PT_MAX_RADIUS; k++) {
    if (k > R) break;
    acc = PT(term)(acc, w[k], p[k]);
  }
  return acc;
}

/* First derivative of radius R along one axis: sum_{k=1..R} w[k] d[k],
 * d[k] = u(+k) - u(-k), from 0 (a row kernel: term() from 0).  Also the
 * CPML's D1 terms. */
STRATA_HD T PT(deriv)(int R, const T *w, const T *d) {
  return PT(pairs)(R, (T)0, w, d);
}

/* The neighbour sums of the symmetric stencils from values passed as
 * arguments, in the order of STRATA_PT_FACES6 etc. (the names say where
 * each value lies: m -1, p +1 along the axes named, x fastest).  A loop
 * that loads 26 neighbours should prefer the macros: passing them all at
 * once keeps them all live. */
STRATA_HD T PT(faces6)(T xm, T xp, T ym, T yp, T zm, T zp) {
  return xm + xp + ym + yp + zm + zp;
}
STRATA_HD T PT(edges12)(T xmym, T xpym, T xmyp, T xpyp, T xmzm, T xpzm,
                        T xmzp, T xpzp, T ymzm, T ypzm, T ymzp, T ypzp) {
  return xmym + xpym + xmyp + xpyp + xmzm + xpzm + xmzp + xpzp + ymzm +
         ypzm + ymzp + ypzp;
}
STRATA_HD T PT(corners8)(T mmm, T pmm, T mpm, T ppm, T mmp, T pmp, T mpp,
                         T ppp) {
  return mmm + pmm + mpm + ppm + mmp + pmp + mpp + ppp;
}
/* 2D: the four faces and the four corners of a 3x3 box. */
STRATA_HD T PT(faces4)(T xm, T xp, T ym, T yp) { return xm + xp + ym + yp; }
STRATA_HD T PT(corners4)(T mm, T pm, T mp, T pp) { return mm + pm + mp + pp; }

/* Symmetric 27-point stencil from the centre and the three neighbour sums:
 *   C0 u + C1 faces + C2 edges + C3 corners. */
STRATA_HD T PT(sym27)(const T *C, T u, T faces, T edges, T corners) {
  return C[0] * u + C[1] * faces + C[2] * edges + C[3] * corners;
}
/* The same stencil one input plane at a time, for kernels that walk z and
 * add each input plane to the three output planes it touches (plane
 * accumulation): the plane's centre a, its in-plane faces s1 and in-plane
 * corners s2 give K[0] a + K[1] s1 + K[2] s2, with K = C for the output in
 * the same plane and K = C + 1 for the planes above and below.  Summed
 * over the three planes this is sym27 in another order (equal up to
 * rounding; the CUDA tests compare within a rounding bound). */
STRATA_HD T PT(sym27_plane)(const T *K, T a, T s1, T s2) {
  return K[0] * a + K[1] * s1 + K[2] * s2;
}

/* ======================================================================
 * Second-order wave (acoustic) and the explicit scalar FDTD scheme
 * ==================================================================== */

/* The centre weight of the wave engine's Laplacian: lap[0] * D (lap[0] is
 * one axis's centre weight; the star's other weights are lap[k] on every
 * axis). */
STRATA_HD T PT(lap_centre)(int D, T lap0) { return lap0 * (T)D; }
/* Variable density (b = 1/rho): rho_i div(b grad u) at point i as
 *   sum over the stencil's pairs (distance k, weight lap[k], every axis)
 *   of lap[k] (b_i + b_j) (u_j - u_i), times 1 / (2 b_i):
 * vd_term adds one neighbour j (order: per k the x, y, z axes, the -k
 * neighbour before the +k one), vd_total scales the sum.  Symmetric in
 * (i, j), of the stencil's order for smooth b, the Laplacian where b is
 * constant. */
STRATA_HD T PT(vd_term)(T acc, T w, T bi, T bj, T ui, T uj) {
  return acc + w * ((bi + bj) * (uj - ui));
}
STRATA_HD T PT(vd_total)(T acc, T bi) { return PT_DIV(acc, (T)2 * bi); }

/* Leapfrog: u+ = 2u - u- + c2 L (c2 = (c dt / h)^2 at the point). */
STRATA_HD T PT(wave)(T u, T um, T c2, T L) {
  return (T)2 * u - um + c2 * L;
}

/* Leapfrog with a sponge of strength e >= 0 at the point:
 *   u+ = (2u - (1 - e) u- + c2 L) / (1 + e).
 * Equal to wave() bit for bit where e == 0.  On the device the fp32
 * division is the fast one (__fdividef, within 2 ulp). */
STRATA_HD T PT(wave_sponge)(T u, T um, T c2, T L, T e) {
  return PT_DIV((T)2 * u - ((T)1 - e) * um + c2 * L, (T)1 + e);
}

/* CPML memory variable along one axis: psi' = b psi + a d, with d the
 * first derivative of u there (deriv() with the d1 weights).  Yee's psi
 * fields use the same recursion with d the staggered difference. */
STRATA_HD T PT(cpml_psi)(T b, T a, T psi, T d) { return b * psi + a * d; }

/* CPML auxiliary zeta of the second-order form: zeta' = b zeta + a (d2 +
 * dpsi), d2 the axis's second derivative of u (pairs() from lap[0] u with
 * the lap weights), dpsi the first derivative of psi (deriv()). */
STRATA_HD T PT(cpml_zeta)(T b, T a, T zeta, T d2, T dpsi) {
  return b * zeta + a * (d2 + dpsi);
}

/* The CPML correction of the Laplacian: L + (dpsi + zeta'). */
STRATA_HD T PT(cpml_add)(T L, T dpsi, T zeta) { return L + (dpsi + zeta); }

/* Free surface: the boundary node is 0 and the ghost at distance q is the
 * odd image of the interior point at distance q. */
STRATA_HD T PT(free_image)(T v) { return -v; }

/* First-order Mur absorbing boundary node (wave and Yee):
 *   u_b^{n+1} = u_in^n + mur (u_in^{n+1} - u_b^n),
 * u_in the node next to the boundary node u_b, mur = (c dt - h)/(c dt + h). */
STRATA_HD T PT(mur)(T in_old, T in_new, T b_old, T mur) {
  return in_old + mur * (in_new - b_old);
}

/* ======================================================================
 * Yee TM (Ez, Hx, Hy)
 * ==================================================================== */

/* H half step: Hx -= ch d with d = Ez(j+1) - Ez(j) or Hx's psi;
 * Hy += ch d with d = Ez(i+1) - Ez(i) or Hy's psi. */
STRATA_HD T PT(yee_hx)(T hx, T ch, T d) { return hx - ch * d; }
STRATA_HD T PT(yee_hy)(T hy, T ch, T d) { return hy + ch * d; }

/* E step: Ez += ce ((Hy(i) - Hy(i-1)) - (Hx(j) - Hx(j-1))), dhy and dhx
 * the two differences. */
STRATA_HD T PT(yee_ez)(T ez, T ce, T dhy, T dhx) {
  return ez + ce * (dhy - dhx);
}
/* ... and its CPML terms: + ce psi_ezx (x), - ce psi_ezy (y). */
STRATA_HD T PT(yee_ez_psix)(T ez, T ce, T psi) { return ez + ce * psi; }
STRATA_HD T PT(yee_ez_psiy)(T ez, T ce, T psi) { return ez - ce * psi; }

/* ======================================================================
 * Multigrid: the level operator, the residual and the smoother
 * ==================================================================== */

/* The level operator S u at a point; SHAPE 5, 9 (2D), 7, 26 (27-point
 * without face terms), 27 (3D), C[0..3] the centre, face, edge and corner
 * weights.  faces/edges/corners: the neighbour sums (2D: faces4, and
 * corners4 as the edges of SHAPE 9; 3D: faces6, edges12, corners8); the
 * terms a SHAPE does not have are not read.  27's face term comes last. */
STRATA_HD T PT(mg_op)(int SHAPE, const T *C, T u, T faces, T edges,
                      T corners) {
  if (SHAPE == 5 || SHAPE == 7) return C[0] * u + C[1] * faces;
  if (SHAPE == 9) return C[0] * u + C[1] * faces + C[2] * edges;
  T s = C[0] * u + C[2] * edges + C[3] * corners;
  if (SHAPE == 27) s += C[1] * faces;
  return s;
}

/* Residual r = bs (b + bsh) - S u (bs, bsh: the level's right-hand side
 * scale and shift). */
STRATA_HD T PT(mg_residual)(T bs, T bsh, T b, T s) {
  return bs * (b + bsh) - s;
}

/* Weighted Jacobi: u' = cu u + cr r (cu = 1 and cr = omega / diag for
 * the smoother; other pairs give the residual-correction forms). */
STRATA_HD T PT(mg_jacobi)(T cu, T cr, T u, T r) { return cu * u + cr * r; }

/* The cell-centred variable-coefficient operator (FV multigrid) at one
 * cell: a u + h2inv sum_f beta_f (u - u_f) over the faces x-, x+, y-, y+,
 * z-, z+ (2D: bzm = bzp = 0, zm = zp = u). */
STRATA_HD T PT(fv_op)(T a, T h2inv, T u, T bxm, T xm, T bxp, T xp, T bym,
                      T ym, T byp, T yp, T bzm, T zm, T bzp, T zp) {
  return a * u + h2inv * (bxm * (u - xm) + bxp * (u - xp) + bym * (u - ym) +
                          byp * (u - yp) + bzm * (u - zm) + bzp * (u - zp));
}
/* The smoothers' update from a residual r: u + w dinv r (Gauss-Seidel:
 * w = 1; weighted Jacobi: w = omega; Chebyshev: the step's d, below). */
STRATA_HD T PT(fv_relax)(T u, T w, T dinv, T r) { return u + w * dinv * r; }
/* Chebyshev's step direction: c1 d + c2 dinv r. */
STRATA_HD T PT(fv_cheb)(T d, T c1, T c2, T dinv, T r) {
  return c1 * d + c2 * dinv * r;
}

#endif /* STRATA_POINT_BODY */
