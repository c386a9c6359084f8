/* Every key a case file may hold: type, range, default and meaning.  The
 * reference in docs/cases.md is generated from this table
 * (strata run --keys), so the two cannot drift apart. */
#include "run.h"

#define NORANGE 1, 0
#define KI(s, k, lo, hi, def, doc) {s, k, CF_INT, lo, hi, 0, 0, NULL, def, doc}
#define KF(s, k, lo, hi, def, doc) {s, k, CF_FLOAT, lo, hi, 0, 0, NULL, def, doc}
#define KB(s, k, def, doc) {s, k, CF_BOOL, NORANGE, 0, 0, NULL, def, doc}
#define KS(s, k, def, doc) {s, k, CF_STRING, NORANGE, 0, 0, NULL, def, doc}
#define KE(s, k, ch, def, doc) {s, k, CF_ENUM, NORANGE, 0, 0, ch, def, doc}
#define KLI(s, k, lo, hi, a, b, def, doc) {s, k, CF_INTS, lo, hi, a, b, NULL, def, doc}
#define KLF(s, k, lo, hi, a, b, def, doc) {s, k, CF_FLOATS, lo, hi, a, b, NULL, def, doc}
#define KLE(s, k, ch, a, b, def, doc) {s, k, CF_ENUMS, NORANGE, a, b, ch, def, doc}

#define BCS "dirichlet|neumann|periodic|none|cpml|sponge|free|pec|mur|pml"

const cf_key run_schema[] = {
    KS("case", "name", "file name without .ini",
       "names the run in messages, the summary and the default output folder"),
    KS("case", "description", "", "free text, copied to the summary"),

    KE("solver", "kind", "operator|heat|wave|fdtd|multigrid", NULL,
       "what to run: `operator` applies a stencil step after step, `heat` "
       "diffusion, `wave` acoustic waves (3D or a 2D x-z section), `fdtd` "
       "electromagnetics (2D), "
       "`multigrid` the Poisson equation -lap(phi) = psi (2D, 3D)"),

    KLI("grid", "n", 1, 1 << 20, 1, 3, NULL,
        "interior points along x, y[, z]; the count of values sets the "
        "dimension (heat 2-3, wave 3: [nx, 1, nz] is a 2D x-z section, fdtd 2, "
        "multigrid 2-3, operator 1-3)"),
    KF("grid", "spacing", 1e-300, 1e300, "1 (wave: 10)",
       "grid spacing h (metres for wave; output files record it)"),
    KE("grid", "precision", "f32|f64", "heat: f64, others: f32",
       "floating-point precision of every field"),

    KE("run", "backend", "auto|cpu|cuda", "auto",
       "engine; auto = CUDA when a GPU is usable, else the CPU"),
    KI("run", "device", 0, 1024, "0", "CUDA device ordinal"),
    KS("run", "view", "off",
       "watch the run in a browser at [ADDR:]PORT (as --view; ADDR "
       "defaults to 127.0.0.1)"),
    KI("run", "threads", 0, 4096, "0",
       "CPU threads, 0 = OpenMP's default (OMP_NUM_THREADS, else one per "
       "logical CPU); more threads than free cores run much slower"),
    KI("run", "ranks_y", 0, 1 << 20, "0",
       "over several processes: ranks along y of a y-z split of a 3D grid "
       "(operators, heat and wave; it must divide the process count; wave "
       "on the CPU engine), 0 = the exchange model's choice (slabs on GPUs), "
       "1 = slabs along z"),
    KI("run", "steps", 1, 2000000000, NULL,
       "time steps to take (not multigrid: see [poisson] max_cycles)"),
    KI("run", "checkpoint_every", 0, 2000000000, "0",
       "write a checkpoint every N steps (0 = never; multigrid: every N "
       "cycles)"),
    KI("run", "check_every", 0, 2000000000, "500",
       "look for NaN and infinity in the solution every N steps (one "
       "reduction; 0 = never) and stop with an error naming the step, the "
       "field and the point; every snapshot and checkpoint is checked "
       "before it is written (multigrid: its residual, every cycle)"),

    KE("boundary", "all", BCS, "by solver",
       "kind of every face: heat/operator/multigrid dirichlet, neumann, "
       "periodic "
       "(operator also none); wave cpml, sponge, free, periodic; fdtd pec, "
       "mur, pml, periodic.  Defaults: dirichlet, cpml, pec"),
    KE("boundary", "x_lo", BCS, "= all", "kind of the face x = 0"),
    KE("boundary", "x_hi", BCS, "= all", "kind of the face x = n-1"),
    KE("boundary", "y_lo", BCS, "= all", "kind of the face y = 0"),
    KE("boundary", "y_hi", BCS, "= all", "kind of the face y = n-1"),
    KE("boundary", "z_lo", BCS, "= all",
       "kind of the face z = 0 (for wave, the top: `free` is a free "
       "surface)"),
    KE("boundary", "z_hi", BCS, "= all", "kind of the face z = n-1"),
    KF("boundary", "value", -1e300, 1e300, "0",
       "value held on dirichlet faces"),
    KI("boundary", "width", 0, 1000, "wave 20, fdtd 16",
       "thickness in points of the absorbing layers (cpml, sponge, pml)"),

    KE("initial", "kind", "zero|constant|random|gaussian",
       "heat gaussian, operator random, wave zero",
       "initial state (operator, heat, wave): a Gaussian bump, uniform "
       "random values, a constant or zero"),
    KF("initial", "amplitude", -1e300, 1e300, "1",
       "peak of the Gaussian; random values lie in [-amplitude, amplitude)"),
    KLF("initial", "center", -1e12, 1e12, 1, 3, "the grid's centre",
        "Gaussian centre in grid points (i, j[, k])"),
    KF("initial", "width", 1e-6, 1e12, "n/10 of the smallest axis",
       "Gaussian standard deviation in grid points"),
    KF("initial", "value", -1e300, 1e300, "0", "the constant"),
    KI("initial", "seed", 0, 2147483647, "1", "seed of the random values"),

    KE("operator", "stencil", "laplacian|star|derivative|box27|laplacian9",
       "laplacian",
       "the operator: central Laplacian, isotropic star, first derivative, "
       "symmetric 27-point box (3D) or compact 9-point Laplacian (2D)"),
    KE("operator", "order", "2|4|6|8", "2",
       "accuracy order of laplacian and derivative (radius order/2)"),
    KE("operator", "axis", "x|y|z", "x", "axis of derivative"),
    KF("operator", "center", -1e300, 1e300, "0", "centre weight of star"),
    KLF("operator", "coefficients", -1e300, 1e300, 1, 4, "(none)",
        "star: weights of offsets 1..r (sets the radius); box27: C0, C1, "
        "C2, C3 (centre, faces, edges, corners)"),
    KF("operator", "scale", -1e300, 1e300, "1",
       "multiplies every weight; with identity = true, u' = u + scale "
       "op(u) (explicit diffusion when op is a Laplacian)"),
    KB("operator", "identity", "false", "add u to the result (see scale)"),
    KS("operator", "variant", "auto", "kernel variant by name"),

    KE("heat", "operator", "fd|fe27", "fd",
       "fd: 5/7-point Laplacian; fe27: 27-point finite-element operator "
       "(3D)"),
    KF("heat", "diffusion_number", 0, 10, "0.1",
       "D = kappa dt / h^2; fd is stable up to 1/(2 dims), fe27 up to 1/2"),
    KI("heat", "fuse", 0, 8, "0",
       "steps fused per sweep (temporal blocking), 0 = the backend's "
       "choice"),

    KF("wave", "velocity", 1e-6, 1e9, "2000",
       "constant velocity (m/s) when no layers are given"),
    KLF("wave", "layer_tops", -1e9, 1e9, 1, 64, "(none)",
        "depths (m) of the layers' tops, increasing, the first <= 0"),
    KLF("wave", "layer_velocities", 1e-6, 1e9, 1, 64, "(none)",
        "velocity (m/s) of each layer"),
    KLF("wave", "layer_densities", 1e-6, 1e9, 1, 64, "(none: constant)",
        "density (kg/m^3) of each layer: variable-density acoustics"),
    KE("wave", "order", "2|4|6|8", "8", "spatial order (8: the 25-point "
       "stencil)"),
    KF("wave", "dt", 0, 1e6, "0",
       "time step (s); 0 = 0.8 of the CFL limit"),
    KF("wave", "min_ppw", 0, 1e6, "4",
       "refuse fewer points per wavelength than this"),
    KF("wave", "absorb_reflection", 1e-12, 1, "1e-4",
       "design reflection of the absorbing layers"),

    KS("model", "velocity", "(none)",
       "velocity model file (m/s): .npy, .sgy/.segy, or raw with format = "
       "raw; resampled onto the grid (replaces [wave] velocity and layers; "
       "the fastest point sets dt = 0's choice)"),
    KS("model", "density", "(none)",
       "density model file (kg/m^3), read like velocity (a solver without "
       "variable density refuses it)"),
    KE("model", "format", "auto|npy|segy|raw", "auto",
       "file format; auto = by the name (.npy, .sgy, .segy)"),
    KS("model", "axes", "zyx (2D: zx)",
       "npy and raw: the file's axes, slowest first (xyz = Devito's "
       "(nx, ny, nz); xz = (nx, nz)); a 2D x-z model is the same at every y"),
    KLI("model", "shape", 1, 1L << 40, 2, 3, "(none)",
        "raw: sizes along axes, in their order"),
    KE("model", "dtype", "f32|f64", "f32", "raw: sample type"),
    KE("model", "byte_order", "little|big", "little", "raw: byte order"),
    KE("model", "segy_geometry", "auto|traces|headers", "auto",
       "segy: traces in file order (lines of segy_nx along x), or placed "
       "by their inline (y) and crossline (x) numbers; auto = headers when "
       "the inline numbers vary"),
    KI("model", "segy_nx", 0, 1 << 30, "0",
       "segy traces: traces per line along x (0 = all: a 2D section)"),
    KI("model", "inline_byte", 1, 237, "189",
       "segy headers: byte of the inline number in the trace header"),
    KI("model", "crossline_byte", 1, 237, "193",
       "segy headers: byte of the crossline number"),
    KLF("model", "spacing", 1e-300, 1e300, 1, 3, "[grid] spacing",
        "metres between the model's samples: one value for every axis, "
        "x, z (a section) or x, y, z"),
    KLF("model", "origin", -1e12, 1e12, 2, 3, "0, 0, 0",
        "position (m) of the model's first sample: x, z or x, y, z; the "
        "model must cover the grid"),
    KE("model", "interpolation", "linear|nearest", "linear",
       "resampling onto the grid: trilinear, or the nearest sample"),

    KLF("source", "position", -1e12, 1e12, 2, 3, "the grid's centre",
        "wave: x, y, z in metres; fdtd: node i, j"),
    KF("source", "frequency", 1e-9, 1e12, "10",
       "wave: Ricker peak frequency (Hz)"),
    KF("source", "amplitude", -1e300, 1e300, "1", "source amplitude"),
    KF("source", "delay", 0, 1e12, "wave 1.5/f, fdtd 0",
       "time of the wavelet's peak"),
    KE("source", "waveform", "sine|gaussian|ricker|none", "sine",
       "fdtd: the source current"),
    KF("source", "period", 1e-9, 1e12, "20",
       "fdtd: the waveform's period (time units)"),

    KLF("receivers", "start", -1e12, 1e12, 3, 3, NULL,
        "x, y, z (m) of the first receiver of the line"),
    KLF("receivers", "end", -1e12, 1e12, 3, 3, NULL,
        "x, y, z (m) of the last receiver"),
    KI("receivers", "count", 1, 32767, NULL, "receivers along the line"),
    KI("receivers", "every", 1, 1000000, "1", "record every N-th step"),

    KLF("survey", "shots", -1e12, 1e12, 3, 63, "(none)",
        "wave: x, y, z (m) of each shot in turn (at most 21 shots; more "
        "from shots_file, or a line or grid from start, end and count)"),
    KS("survey", "shots_file", "(none)",
       "a .npy of shape (shots, 3): x, y, z (m) of each shot"),
    KLF("survey", "start", -1e12, 1e12, 3, 3, "(none)",
        "x, y, z (m) of the first shot of a line, or a corner of a grid"),
    KLF("survey", "end", -1e12, 1e12, 3, 3, "(none)",
        "x, y, z (m) of the last shot of a line, or the opposite corner"),
    KLI("survey", "count", 1, 100000, 1, 2, "(none)",
        "shots along the line, or along x and y of a grid (one depth)"),
    KE("survey", "receivers", "fixed|moving", "fixed",
       "`moving`: [receivers] start and end give x, y as offsets from "
       "each shot's source and z as depth (the spread moves with it)"),
    KS("survey", "wavelet_file", "(none: the Ricker)",
       "a 1D .npy of the source's samples from t = 0, instead of the "
       "Ricker of [source] frequency"),
    KF("survey", "wavelet_dt", 1e-12, 1e6, "(required with wavelet_file)",
       "the wavelet's sample interval in seconds"),
    KLE("survey", "formats", "segy|npy|h5", 1, 3, "segy",
        "each shot's gather: SEG-Y rev 1 (full trace headers), NumPy, HDF5 "
        "(when built with it)"),
    KI("survey", "first_number", 0, 99999999, "1",
       "the first shot's number (its files' names, SEG-Y field record)"),
    KB("survey", "split", "false",
       "over several processes: run every shot over all of them (the "
       "grid split along z, for a model too large for one GPU) instead "
       "of sharing the shots out"),
    KB("survey", "resume", "true",
       "skip the shots this survey already wrote into the output folder "
       "(false: run them all again)"),

    KE("fdtd", "scheme", "explicit|yee", "explicit",
       "the explicit E update (Ez alone), or Yee's staggered TM scheme"),
    KF("fdtd", "courant", 1e-9, 10, "0.5", "c dt / h; limit 1/sqrt(2)"),

    KE("poisson", "discretization", "fd7|fe27|fv7", "fe27",
       "fd7: the 7-point (3D) / 5-point (2D) Laplacian; fe27: trilinear "
       "27-point (3D) / bilinear 9-point (2D) finite elements, lumped mass; "
       "fv7: cell-centred finite volumes for -div(beta grad phi) = psi "
       "(beta below; fp64)"),
    KE("poisson", "smoother", "default|jacobi|chebyshev|gsrb", "default",
       "default: jacobi for fd7 and fe27 (their only one), gsrb for fv7"),
    KE("poisson", "beta", "constant|sines|jump|file", "constant",
       "fv7's coefficient: 1; 1 + beta_amplitude * sin(2 pi x/Lx) sin(2 pi "
       "y/Ly) [sin(2 pi z/Lz)]; 1 below the plane x = Lx/2 and beta_ratio "
       "above; beta_file"),
    KF("poisson", "beta_amplitude", -0.99, 0.99, "0.25",
       "amplitude of beta = sines"),
    KF("poisson", "beta_ratio", 1e-12, 1e12, "100", "beta beyond the plane "
       "of beta = jump"),
    KS("poisson", "beta_file", "(none)",
       "beta per cell as .npy of the grid's shape, f32 or f64, positive"),
    KE("poisson", "face_mean", "harmonic|arithmetic", "harmonic",
       "fv7: a face's beta from its two cells'"),
    KE("poisson", "cycle", "v|f|w|fmg", "v", "multigrid cycle; fmg: full multigrid (one FMG solve with V-cycles as the first cycle, V-cycles after it)"),
    KF("poisson", "tolerance", 0, 1, "f64 1e-10, f32 1e-5",
       "stop when the RMS residual has fallen by this factor"),
    KI("poisson", "max_cycles", 1, 100000, "30",
       "cycles at most (the run also stops when the residual stalls)"),
    KE("poisson", "source", "manufactured|gaussian|file",
       "manufactured (fv7: gaussian)",
       "psi: `manufactured` = the Laplacian of a product of sines and "
       "cosines that meets the faces' conditions (the summary gives the "
       "error against it when the Dirichlet values are 0), `gaussian` = a "
       "bump at the centre, `file` = source_file"),
    KS("poisson", "source_file", "(none)",
       "psi as .npy of the grid's shape (ny, nx) or (nz, ny, nx), f32 or f64"),
    KF("poisson", "amplitude", -1e300, 1e300, "1",
       "peak of the manufactured solution or of the Gaussian source"),
    KF("poisson", "width", 1e-6, 1e12, "n/10 of the smallest axis",
       "Gaussian source's standard deviation in grid points"),
    KLF("poisson", "dirichlet_values", -1e300, 1e300, 4, 6,
        "[boundary] value",
        "phi on the Dirichlet faces x_lo, x_hi, y_lo, y_hi[, z_lo, z_hi]"),

    KS("output", "dir", "NAME.out", "output folder (created)"),
    KI("output", "every", 0, 2000000000, "0",
       "write snapshots every N steps (0 = only the final state)"),
    KLE("output", "formats", "npy|vti|png|h5", 1, 4, "npy, png",
        "snapshot formats: NumPy, VTK image data (ParaView), PNG slice, "
        "HDF5 (when built with it; indexed by snapshots.xmf)"),
    KB("output", "async", "true",
       "write the snapshot files in a background thread while the run "
       "steps on (false: the time loop waits for each snapshot's files)"),
    KE("output", "slice_axis", "x|y|z", "wave y, else z",
       "3D: normal of the PNG slice"),
    KI("output", "slice_index", -1, 1 << 20, "-1",
       "3D: index of the slice along slice_axis, -1 = the middle"),
    KE("output", "colormap", "viridis|inferno|gray|seismic", "by solver",
       "PNG colour map (seismic: symmetric about 0)"),
    KLF("output", "range", -1e300, 1e300, 2, 2, "automatic",
        "fixed colour range lo, hi (best for movies)"),
    KB("output", "flip", "false", "draw index 0 of the vertical axis at "
       "the bottom"),
    KB("output", "movie", "false",
       "also make a movie of the PNG snapshots: MP4 through ffmpeg when "
       "installed, else the numbered PNGs stay"),
    KI("output", "fps", 1, 240, "10", "movie frames per second"),
    KB("output", "interfaces", "true",
       "wave with a model ([model] velocity, or [wave] layer_tops): draw "
       "its interfaces as thin black lines over the PNG snapshots, the "
       "movie's frames and the live view"),
    KF("output", "interface_threshold", 0, 1e6, "0.05",
       "an interface lies between neighbouring points whose velocities (or "
       "densities) differ by more than this fraction of the smaller"),
    KLE("output", "traces", "npy|segy|png|h5", 1, 4, "npy, segy, png",
        "wave receivers: NumPy, SEG-Y rev 1, a PNG image of the gather, "
        "HDF5 (when built with it)"),
};

const int run_schema_count = (int)(sizeof run_schema / sizeof run_schema[0]);
