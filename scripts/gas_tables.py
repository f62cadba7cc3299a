#!/usr/bin/env python3
"""Writes the real-gas equation-of-state table of lockstep.prop.gas (src/prop/gas_tables.inc) and
its check file (tests/data/gas_density_check.csv) from CoolProp. Both outputs are committed, so
neither the library nor its tests need CoolProp.

The table holds the compressibility factor Z = p / (rho k_B T) (rho the number density, k_B the
exact SI Boltzmann constant, so Z also carries each equation of state's own gas constant, a few
parts per million) of He, Ne, Ar, Kr, Xe, N2 and air (CoolProp's Helium, Neon, Argon, Krypton,
Xenon, Nitrogen and the pseudo-pure Air) as a function of temperature and *density*, Z(T, rho),
for 250 K <= T <= 500 K and 0 <= rho <= rho_top, rho_top 1 % above the densest state the library
accepts (p = 150 bar at the lowest temperature that is not condensed). Z(T, rho) is the
Helmholtz-energy equation of state itself (evaluated with the phase imposed, so also inside the
two-phase region), analytic even at xenon's critical point, where Z(T, p) is not; one polynomial
per species, through Z at the nt x nx Chebyshev-Lobatto points of the (T, rho) rectangle,
interpolates it to ~1e-10. src/prop/gas.cpp evaluates that polynomial by the barycentric formula
and finds rho from p by a bracketed Newton iteration. Xenon condenses in the domain: below its
critical temperature the library accepts only p <= p_sat(T), with ln p_sat(T) tabulated the same
way in T (three pieces), and takes the vapour root (below the spinodal).

The check file lists CoolProp's number density at random points (not nodes; fixed seed) of each
species' (T, p) domain, 300 per species, and for xenon 20 more just below its saturation line
(p = p_sat(T) (1 - 1e-8), T <= T_c - 0.5 K) and 200 in its near-critical box
|T - T_c| <= 3 K, |p - p_c| <= 5 bar; tests/cpp/prop/test_gas.cpp measures the table against
them.

Regenerate both from the repository root (CoolProp 8.0.0 made the committed files):

    python3 -m venv /tmp/coolprop && /tmp/coolprop/bin/pip install CoolProp==8.0.0
    /tmp/coolprop/bin/python scripts/gas_tables.py            # writes both files
    /tmp/coolprop/bin/python scripts/gas_tables.py --report   # and prints the error per species
"""
import argparse
import math
import os
import random

import CoolProp
import CoolProp.CoolProp as CP

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
N_A = 6.02214076e23  # 1/mol, exact
K_B = 1.380649e-23  # J/K, exact
BAR = 1e5

T_MIN, T_MAX = 250.0, 500.0  # K
P_MAX = 150 * BAR  # Pa

# (species, CoolProp fluid, Chebyshev points along T, along rho), in the order of gas::Species.
FLUIDS = [("He", "Helium", 12, 14), ("Ne", "Neon", 12, 14), ("Ar", "Argon", 14, 18), ("Kr", "Krypton", 18, 22),
          ("Xe", "Xenon", 30, 40), ("N2", "Nitrogen", 14, 18), ("air", "Air", 14, 18)]

XE_TC = CP.PropsSI("Tcrit", "Xenon")
XE_PC = CP.PropsSI("pcrit", "Xenon")
XE_RHOC = CP.PropsSI("rhomolar_critical", "Xenon") * N_A

# ln p_sat(T) of xenon on [T_MIN, T_c]: pieces and points per piece.
PSAT_BREAKS = [T_MIN, 280.0, 288.0, XE_TC]
PSAT_POINTS = 12


def lobatto(a, b, n):
    """n Chebyshev-Lobatto points on [a, b], ascending."""
    return [a + (b - a) * (1 - math.cos(math.pi * k / (n - 1))) / 2 for k in range(n)]


def psat(T):
    return CP.PropsSI("P", "T", T, "Q", 1, "Xenon")


class Fluid:
    def __init__(self, name):
        self.name = name
        self.state = CP.AbstractState("HEOS", name)
        self.t_crit = CP.PropsSI("Tcrit", name)

    def density(self, T, p):
        """CoolProp's number density (1/m^3) at T (K), p (Pa); below T_c the vapour (gas phase
        imposed, so that CoolProp does not pick the liquid at a point on the saturation line)."""
        if T < self.t_crit:
            self.state.specify_phase(CP.iphase_gas)
        self.state.update(CP.PT_INPUTS, p, T)
        rho = self.state.rhomolar() * N_A
        self.state.unspecify_phase()
        return rho

    def z(self, T, rho):
        """Z at (T, rho) (rho in 1/m^3) from the equation of state (gas phase imposed: no phase
        split); the rho -> 0 limit from a tiny density (error ~1e-13)."""
        rho = max(rho, 1e14)
        self.state.specify_phase(CP.iphase_gas)
        self.state.update(CP.DmolarT_INPUTS, rho / N_A, T)
        p = self.state.p()
        self.state.unspecify_phase()
        return p / (rho * K_B * T)

    def density_top(self):
        """1.01 x the densest accepted state (P_MAX at the lowest uncondensed temperature), rounded
        up to three digits."""
        rho = self.density(max(T_MIN, self.t_crit), P_MAX) * 1.01
        scale = 10 ** math.floor(math.log10(rho) - 2)
        return float(math.ceil(rho / scale) * scale)


def bary(nodes, values, x):
    """The polynomial through (nodes, values) at x, nodes Chebyshev-Lobatto (barycentric form)."""
    n = len(nodes)
    num = den = 0.0
    for j, (v, y) in enumerate(zip(nodes, values)):
        if x == v:
            return y
        w = (-1.0) ** j * (0.5 if j in (0, n - 1) else 1.0) / (x - v)
        num += w * y
        den += w
    return num / den


class Table:
    """One species' Z(T, rho) table and the table's density at (T, p), as src/prop/gas.cpp
    computes it (there by Newton steps inside the bracket, here by bisection: the same root)."""

    def __init__(self, fluid, nt, nx):
        self.fluid, self.nt, self.nx = fluid, nt, nx
        self.rho_top = fluid.density_top()
        self.ts = lobatto(T_MIN, T_MAX, nt)
        self.rhos = lobatto(0.0, self.rho_top, nx)
        self.z = [[fluid.z(T, rho) for rho in self.rhos] for T in self.ts]

    def pressure_of(self, T):
        column = [bary(self.ts, [row[k] for row in self.z], T) for k in range(self.nx)]
        return lambda rho: rho * K_B * T * bary(self.rhos, column, rho)

    def density(self, T, p):
        pres = self.pressure_of(T)
        hi = self.rho_top
        if T < self.fluid.t_crit:  # the vapour branch ends at the spinodal, below rho_c
            lo, hi = 0.0, XE_RHOC
            for _ in range(80):
                mid = 0.5 * (lo + hi)
                h = 1e-7 * mid
                if pres(mid + h) > pres(mid - h):
                    lo = mid
                else:
                    hi = mid
        lo = 0.0
        while hi - lo > 1e-15 * hi:
            mid = 0.5 * (lo + hi)
            if pres(mid) > p:
                hi = mid
            else:
                lo = mid
        return 0.5 * (lo + hi)


def psat_table():
    return [[math.log(psat(T)) for T in lobatto(a, b, PSAT_POINTS)] for a, b in zip(PSAT_BREAKS[:-1], PSAT_BREAKS[1:])]


def psat_interpolate(table, T):
    i = max(k for k in range(len(PSAT_BREAKS) - 1) if T >= PSAT_BREAKS[k])
    return math.exp(bary(lobatto(PSAT_BREAKS[i], PSAT_BREAKS[i + 1], PSAT_POINTS), table[i], T))


def near_critical(T, p):
    """Xenon's near-critical box, reported apart (also in test_gas.cpp)."""
    return abs(T - XE_TC) <= 3.0 and abs(p - XE_PC) <= 5 * BAR


def check_points(species, rng):
    pts = []
    while len(pts) < 300:
        T = rng.uniform(T_MIN, T_MAX)
        top = min(P_MAX, psat(T)) if (species == "Xe" and T < XE_TC) else P_MAX
        pts.append((T, rng.uniform(0.0, top)))
    if species == "Xe":
        while len(pts) < 320:  # just below the saturation line
            T = rng.uniform(T_MIN, XE_TC - 0.5)
            pts.append((T, psat(T) * (1 - 1e-8)))
        while len(pts) < 520:
            T = rng.uniform(XE_TC - 3.0, XE_TC + 3.0)
            p = rng.uniform(XE_PC - 5 * BAR, XE_PC + 5 * BAR)
            if T >= XE_TC or p < psat(T):
                pts.append((T, p))
    return pts


def fmt(values, per_line=5):
    return "\n".join("    " + " ".join(f"{v:.16g}," for v in values[k:k + per_line])
                     for k in range(0, len(values), per_line))


def write_table(path, tables, psat_values):
    out = [
        f"// Generated by scripts/gas_tables.py from CoolProp {CoolProp.__version__}; do not edit. Regenerate from the",
        "// repository root with `python3 scripts/gas_tables.py` (CoolProp installed; see the script).",
        "// Z(T, rho) = p / (rho k_B T) at the Chebyshev-Lobatto points of [kTemperatureMin, kTemperatureMax]",
        "// x [0, density_top], row-major in (T point, rho point); T in K, rho in 1/m^3, p in Pa.",
        "// Included by src/prop/gas.cpp inside namespace lockstep::prop::gas::table.",
        "// clang-format off",
        f"constexpr double kTemperatureMin = {T_MIN!r};",
        f"constexpr double kTemperatureMax = {T_MAX!r};",
        f"constexpr double kPressureMax = {P_MAX!r};",
        f"constexpr double kXenonCriticalTemperature = {XE_TC!r};",
        f"constexpr double kXenonCriticalPressure = {XE_PC!r};",
        f"constexpr double kXenonCriticalDensity = {XE_RHOC!r};",
        "",
        "// ln(p_sat / Pa) of xenon on pieces of [kTemperatureMin, kXenonCriticalTemperature].",
        "constexpr double kXenonSaturationBreaks[] = {" + ", ".join(repr(v) for v in PSAT_BREAKS) + "};",
        f"constexpr int kXenonSaturationPoints = {PSAT_POINTS};",
        "constexpr double kXenonSaturationLog[] = {",
        fmt([v for piece in psat_values for v in piece]),
        "};",
        "",
    ]
    for s, t in tables.items():
        out.append(f"constexpr double kZ{s.capitalize()}[] = {{")
        out.append(fmt([v for row in t.z for v in row]))
        out.append("};")
    out.append("")
    out.append("// Per species, in the order of gas::Species: {points along T, points along rho, density_top, Z}.")
    out.append("constexpr Table kTables[] = {")
    for s, t in tables.items():
        out.append(f"    {{{t.nt}, {t.nx}, {t.rho_top!r}, kZ{s.capitalize()}}},  // {s}, CoolProp {t.fluid.name}")
    out.append("};")
    out.append("// clang-format on")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", default=os.path.join(ROOT, "src", "prop", "gas_tables.inc"))
    ap.add_argument("--check", default=os.path.join(ROOT, "tests", "data", "gas_density_check.csv"))
    ap.add_argument("--report", action="store_true", help="print the table's error at the check points")
    args = ap.parse_args()

    tables = {s: Table(Fluid(name), nt, nx) for s, name, nt, nx in FLUIDS}
    psat_values = psat_table()
    write_table(args.table, tables, psat_values)

    rng = random.Random(20240611)
    rows = []
    for s, t in tables.items():
        for T, p in check_points(s, rng):
            rows.append((s, T, p, 0.0 if p == 0 else t.fluid.density(T, p)))
    with open(args.check, "w") as f:
        f.write(f"# CoolProp {CoolProp.__version__} number densities at random points, written by scripts/gas_tables.py\n")
        f.write("species,T_K,p_Pa,rho_per_m3\n")
        for s, T, p, rho in rows:
            f.write(f"{s},{T!r},{p!r},{rho!r}\n")

    if args.report:
        err_psat = max(abs(psat_interpolate(psat_values, T) / psat(T) - 1)
                       for T in [T_MIN + (XE_TC - T_MIN) * k / 997 for k in range(998)])
        print(f"p_sat(T) of xenon: max relative error {err_psat:.2e}")
        for s, t in tables.items():
            worst = {False: 0.0, True: 0.0}
            for s2, T, p, rho in rows:
                if s2 == s and p > 0:
                    near = s == "Xe" and near_critical(T, p)
                    worst[near] = max(worst[near], abs(t.density(T, p) / rho - 1))
            near = f", in the near-critical box {worst[True]:.2e}" if s == "Xe" else ""
            print(f"{s}: max relative density error {worst[False]:.2e}{near}")
    print(f"wrote {os.path.relpath(args.table, ROOT)} ({os.path.getsize(args.table)} bytes) and "
          f"{os.path.relpath(args.check, ROOT)}")


if __name__ == "__main__":
    main()
