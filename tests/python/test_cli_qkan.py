"""`lockstep qkan eval`: a model built in PyTorch with `qkan`, saved as safetensors with its
state_dict names, evaluated by the C++ command-line tool, against `qkan.QKAN` itself."""
import os
import subprocess

import numpy as np
import pytest
import torch

import qkan
from safetensors.torch import save_file

from qkan_random import randomise

CLI = os.environ.get("LOCKSTEP_CLI", "")
if not (CLI and os.access(CLI, os.X_OK)):
    pytest.skip("set LOCKSTEP_CLI to the lockstep command-line tool (scripts/test.sh does)",
                allow_module_level=True)


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)


def png_size(path):
    """(width, height) of a PNG file, after checking its signature, its IHDR chunk's CRC and that
    zlib inflates its image data to height rows of 1 + 3·width (RGB) or 1 + 4·width bytes."""
    import struct
    import zlib

    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    at, idat, size = 8, b"", None
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind}"
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
        if kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    assert size and len(raw) in (size[1] * (1 + 3 * size[0]), size[1] * (1 + 4 * size[0]))
    return size


def randomised_model(gen, width, **kw):
    """qkan.QKAN with every parameter drawn at random (qkan_random.randomise)."""
    return randomise(qkan.QKAN(width, reps=kw.pop("reps", 3), device="cpu", **kw), gen)


CASES = [
    dict(width=[2, 3, 1], flags=[], kw={}),
    dict(width=[4, 5, 3], flags=["--preacts-trainable", "--base-activation", "gelu"],
         kw=dict(preact_trainable=True, base_activation="gelu")),
    dict(width=[3, 2], flags=["--measure", "z", "--ansatz", "mix"], kw=dict(fast_measure=False, ansatz="mix")),
    dict(width=[3, 4, 2], flags=["--ansatz", "rpz", "--base-activation", "tanh"],
         kw=dict(ansatz="rpz_encoding", base_activation="tanh", reps=2)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c["width"])) + "".join(c["flags"]))
def test_eval_matches_qkan(tmp_path, case):
    gen = torch.Generator().manual_seed(hash(str(case)) % (2**31))
    m = randomised_model(gen, case["width"], **case["kw"])
    save_file({k: v.contiguous() for k, v in m.state_dict().items()}, str(tmp_path / "m.safetensors"))
    x = (torch.rand(37, case["width"][0], generator=gen) * 2 - 1).to(torch.float32)
    np.save(tmp_path / "x.npy", x.numpy())
    r = run("qkan", "eval", "--model", str(tmp_path / "m.safetensors"), "--input", str(tmp_path / "x.npy"),
            "--output", str(tmp_path / "y.npy"), *case["flags"])
    assert r.returncode == 0, r.stderr
    y = np.load(tmp_path / "y.npy")
    assert y.dtype == np.float32 and y.shape == (37, case["width"][-1])
    with torch.no_grad():
        ref = m(x).numpy()
    err = np.abs(y - ref).max()
    assert err <= 2e-5 * max(1.0, np.abs(ref).max()), f"max |diff| {err}"


def test_eval_bad_inputs_are_clear_errors(tmp_path):
    gen = torch.Generator().manual_seed(7)
    m = randomised_model(gen, [2, 3, 1])
    sd = {k: v.contiguous() for k, v in m.state_dict().items()}
    save_file(sd, str(tmp_path / "m.safetensors"))
    np.save(tmp_path / "x.npy", np.zeros((5, 2), np.float32))
    np.save(tmp_path / "x3.npy", np.zeros((5, 3), np.float32))
    np.save(tmp_path / "xi.npy", np.zeros((5, 2), np.int64))
    good = ["--model", str(tmp_path / "m.safetensors"), "--output", str(tmp_path / "y.npy")]

    def fails(args, pattern):
        r = run("qkan", "eval", *args)
        assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
        assert pattern in r.stderr, r.stderr
        assert not (tmp_path / "y.npy").exists()

    fails(good + ["--input", str(tmp_path / "x3.npy")], "has 3 columns; the model takes 2 inputs")
    fails(good + ["--input", str(tmp_path / "xi.npy")], "is not supported")
    fails(good + ["--input", str(tmp_path / "nope.npy")], "nope.npy")
    fails(good + ["--input", str(tmp_path / "x.npy"), "--base-activation", "swish"], "unknown base activation 'swish'")
    fails(good + ["--input", str(tmp_path / "x.npy"), "--measure", "both"], "--measure")
    # rpz's θ has one column; the file's (pz) has two. (mix has pz's shapes: no file can tell.)
    fails(good + ["--input", str(tmp_path / "x.npy"), "--ansatz", "rpz"], "theta' has shape")
    # A truncated model file and one missing a tensor.
    data = (tmp_path / "m.safetensors").read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(data[: len(data) - 5])
    fails(["--model", str(tmp_path / "cut.safetensors"), "--output", str(tmp_path / "y.npy"),
           "--input", str(tmp_path / "x.npy")], "cut.safetensors")
    del sd["layers.1.mask"]
    save_file(sd, str(tmp_path / "nomask.safetensors"))
    fails(["--model", str(tmp_path / "nomask.safetensors"), "--output", str(tmp_path / "y.npy"),
           "--input", str(tmp_path / "x.npy")], "no tensor 'layers.1.mask'")


def test_fit_writes_a_model_qkan_loads(tmp_path):
    """C++ -> PyTorch: a model trained by `lockstep qkan fit` loads strictly into qkan.QKAN, whose
    forward then equals `lockstep qkan eval`; the history records a falling loss."""
    from safetensors.torch import load_file

    model, hist = tmp_path / "m.safetensors", tmp_path / "h.csv"
    r = run("qkan", "fit", "--steps", "10", "--widths", "1,3,1", "--quiet", "--output", str(model),
            "--history", str(hist), "--plot", "")
    assert r.returncode == 0, r.stderr
    rows = [line.split(",") for line in hist.read_text().splitlines()]
    assert rows[0] == ["step", "train_loss", "test_loss"] and len(rows) == 11
    assert float(rows[-1][1]) < float(rows[1][1])
    m = qkan.QKAN([1, 3, 1], reps=3, device="cpu", preact_trainable=True, postact_weight_trainable=True,
                  postact_bias_trainable=True, ba_trainable=True)
    m.load_state_dict(load_file(str(model)))
    x = np.linspace(0, 1, 50, dtype=np.float32).reshape(-1, 1)
    np.save(tmp_path / "x.npy", x)
    # No flags: the options come from the file's metadata (the fit trained with the encoding on).
    r = run("qkan", "eval", "--model", str(model), "--input", str(tmp_path / "x.npy"), "--output",
            str(tmp_path / "y.npy"))
    assert r.returncode == 0, r.stderr
    with torch.no_grad():
        ref = m(torch.from_numpy(x)).numpy()
    assert np.abs(np.load(tmp_path / "y.npy") - ref).max() <= 2e-5 * max(1.0, np.abs(ref).max())


def test_fit_bad_options_are_clear_errors(tmp_path):
    for args, pattern in [(["--steps", "-3"], "--steps"), (["--formula", "nope"], "unknown formula 'nope'"),
                          (["--widths", "1,x"], "--widths wants positive integers"),
                          (["--optimizer", "sgd"], "--optimizer"), (["--range", "1", "1"], "input range"),
                          (["--widths", "2,1"], "the model takes 2")]:
        r = run("qkan", "fit", "--quiet", "--output", str(tmp_path / "m.safetensors"), "--history",
                str(tmp_path / "h.csv"), "--plot", str(tmp_path / "p.png"), *args)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert pattern in r.stderr, (args, r.stderr)
        assert not (tmp_path / "m.safetensors").exists()


def test_digits_from_the_cli(tmp_path):
    """A real data set end to end: scikit-learn's 8×8 handwritten digits (1797 images, 10
    classes), exported here as .npy, trained by `lockstep qkan fit` (cross-entropy, Adam) and
    scored from `lockstep qkan eval`'s outputs on held-out images."""
    from sklearn.datasets import load_digits

    d = load_digits()
    X, y = d.data / 16.0, d.target.astype(np.float64)
    idx = np.random.default_rng(0).permutation(len(X))
    train, test = idx[:1437], idx[1437:]
    for name, arr in [("trx", X[train]), ("try", y[train]), ("tex", X[test]), ("tey", y[test])]:
        np.save(tmp_path / f"{name}.npy", arr)
    p = lambda name: str(tmp_path / name)
    r = run("qkan", "fit", "--train-x", p("trx.npy"), "--train-y", p("try.npy"), "--test-x", p("tex.npy"),
            "--test-y", p("tey.npy"), "--loss", "cross_entropy", "--optimizer", "adam", "--lr", "0.01",
            "--steps", "300", "--batch", "128", "--widths", "64,10", "--quiet", "--output", p("m.safetensors"),
            "--history", p("h.csv"), "--plot", p("fit.png"))
    assert r.returncode == 0, r.stderr
    assert png_size(p("fit.png")) == (1200, 800)
    r = run("qkan", "eval", "--model", p("m.safetensors"), "--input", p("tex.npy"), "--output", p("out.npy"))
    assert r.returncode == 0, r.stderr
    accuracy = (np.load(p("out.npy")).argmax(axis=1) == y[test]).mean()
    assert accuracy >= 0.95, f"test accuracy {accuracy:.3f}"


def j0like_rows(n, seed):
    x = np.random.default_rng(seed).uniform(0, 1, size=(n, 1))
    return x, np.sinc(20 * x / np.pi)


def test_csv_data_and_the_fit_figure(tmp_path):
    """Data sets as CSV (with and without a header row) train as .npy ones do, `qkan eval` reads
    and writes CSV, and the fit writes a valid PNG figure (none with --plot "")."""
    p = lambda name: str(tmp_path / name)
    (xtr, ytr), (xte, yte) = j0like_rows(200, 1), j0like_rows(100, 2)
    np.savetxt(p("trx.csv"), xtr, delimiter=",", header="x", comments="")
    np.savetxt(p("try.csv"), ytr, delimiter=",")
    np.savetxt(p("tex.csv"), xte, delimiter=",", header="x", comments="")
    np.savetxt(p("tey.csv"), yte, delimiter=",", header="y", comments="")
    for name, arr in [("trx.npy", xtr), ("try.npy", ytr), ("tex.npy", xte), ("tey.npy", yte)]:
        np.save(p(name), arr)
    common = ["qkan", "fit", "--steps", "5", "--quiet"]
    r = run(*common, "--train-x", p("trx.csv"), "--train-y", p("try.csv"), "--test-x", p("tex.csv"),
            "--test-y", p("tey.csv"), "--output", p("c.safetensors"), "--history", p("c.csv"), "--plot", p("c.png"))
    assert r.returncode == 0, r.stderr
    assert png_size(p("c.png")) == (1200, 800)
    r = run(*common, "--train-x", p("trx.npy"), "--train-y", p("try.npy"), "--test-x", p("tex.npy"),
            "--test-y", p("tey.npy"), "--output", p("n.safetensors"), "--history", p("n.csv"), "--plot", "")
    assert r.returncode == 0, r.stderr
    assert sorted(f.name for f in tmp_path.glob("*.png")) == ["c.png"]
    # The learned activations: one panel per layer of a deeper model.
    r = run(*common, "--widths", "1,2,1", "--output", p("e.safetensors"), "--history", p("e.csv"), "--plot", "",
            "--activations-plot", p("act.png"))
    assert r.returncode == 0, r.stderr
    assert png_size(p("act.png"))[0] > 0
    # Without --plot, the figure goes beside the model file.
    r = run(*common, "--output", p("d.safetensors"), "--history", p("d.csv"))
    assert r.returncode == 0, r.stderr
    assert png_size(p("d.png")) == (1200, 800)
    # The same numbers from either format give the same training run.
    assert (tmp_path / "c.csv").read_text() == (tmp_path / "n.csv").read_text()
    r = run("qkan", "eval", "--model", p("c.safetensors"), "--input", p("tex.csv"), "--output", p("y.csv"))
    assert r.returncode == 0, r.stderr
    r = run("qkan", "eval", "--model", p("c.safetensors"), "--input", p("tex.npy"), "--output", p("y.npy"))
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.loadtxt(p("y.csv"), delimiter=",").reshape(-1, 1), np.load(p("y.npy")))
    # Bad CSV files name the line and column.
    (tmp_path / "bad.csv").write_text("x\n0.5\n0.25\nabc\n")
    (tmp_path / "ragged.csv").write_text("1,2\n3\n")
    (tmp_path / "empty.csv").write_text("")
    for name, pattern in [("bad.csv", "line 4, column 1: 'abc' is not a number"),
                          ("ragged.csv", "line 2 has 1 cells, the first row has 2"),
                          ("empty.csv", "the file is empty")]:
        r = run("qkan", "eval", "--model", p("c.safetensors"), "--input", p(name), "--output", p("z.npy"))
        assert r.returncode == 2 and pattern in r.stderr, (name, r.returncode, r.stderr)
        r = run(*common, "--train-x", p(name), "--train-y", p("try.csv"), "--test-x", p("tex.csv"),
                "--test-y", p("tey.csv"), "--output", p("z.safetensors"), "--history", p("z.csv"), "--plot", "")
        assert r.returncode == 2 and pattern in r.stderr, (name, r.returncode, r.stderr)


def test_bench_runs_and_writes_json(tmp_path):
    import json

    r = run("qkan", "bench", "--widths", "2,3,1", "--batch", "16", "--repeats", "3", "--warmup", "1",
            "--dtype", "f64", "--threads", "1", "--json", str(tmp_path / "b.json"))
    assert r.returncode == 0, r.stderr
    assert "forward+backward" in r.stdout and "ns per circuit" in r.stdout
    b = json.loads((tmp_path / "b.json").read_text())
    assert b["widths"] == [2, 3, 1] and b["batch"] == 16 and b["circuits"] == 16 * (2 * 3 + 3)
    assert [t["what"] for t in b["timings"]] == ["forward", "forward+backward", "training step (Adam)"]
    assert all(0 < t["min_s"] <= t["median_s"] for t in b["timings"])
    r = run("qkan", "bench", "--help")
    assert r.returncode == 0 and "--widths" in r.stdout and "--json" in r.stdout


@pytest.mark.parametrize("args,pattern", [
    (["bench", "--widths", "0,3"], "--widths wants positive integers"),
    (["bench", "--widths", "4"], "at least two widths"),
    (["bench", "--batch", "0"], "--batch"),
    (["bench", "--dtype", "f16"], "--dtype"),
    (["bench", "--repeats", "0"], "--repeats"),
    (["bench", "--threads", "0"], "--threads"),
    (["bench", "--ansatz", "zz"], "unknown ansatz"),
    (["bench", "--bogus"], "--bogus"),
    (["fit", "--dtype", "f16"], "--dtype"),
    (["fit", "--device", "tpu"], "--device"),
    (["eval", "--device", "gpu"], "--device"),
    (["fit", "--threads", "-1"], "--threads"),
    (["fit", "--lr", "0"], "--lr"),
    (["fit", "--loss", "hinge"], "--loss"),
    (["fit", "--reps", "0"], "--reps"),
    (["fit", "--init", "/nonexistent.safetensors"], "--init"),
    (["fit", "--train-x", "/nonexistent.npy"], "--train-x"),
    (["fit", "--train", "0"], "--train"),
    (["eval", "--output", "y.npy"], "--model"),
    (["eval", "--loss", "hinge"], "--loss"),
])
def test_bad_options_exit_2_with_the_option_named(tmp_path, args, pattern):
    r = subprocess.run([CLI, "qkan", *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert pattern in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_bad_combinations_exit_2(tmp_path):
    p = lambda name: str(tmp_path / name)
    r = run("qkan", "fit", "--steps", "1", "--quiet", "--widths", "1,2,1", "--output", p("m.safetensors"),
            "--history", p("h.csv"), "--plot", "")
    assert r.returncode == 0, r.stderr
    np.save(p("x.npy"), np.zeros((4, 1)))
    np.save(p("t2.npy"), np.zeros((4, 2)))
    for args, pattern in [
        (["fit", "--init", p("m.safetensors"), "--reps", "2"], "disagrees with the 3 reps"),
        (["fit", "--init", p("m.safetensors"), "--widths", "1,1"], "disagrees with the widths"),
        (["eval", "--model", p("m.safetensors"), "--input", p("x.npy"), "--output", p("y.npy"), "--gradients",
          p("g.safetensors")], "--gradients requires --targets"),
        (["eval", "--model", p("m.safetensors"), "--input", p("x.npy"), "--output", p("y.npy"), "--loss", "mse"],
         "--loss requires --targets"),
        (["eval", "--model", p("m.safetensors"), "--input", p("x.npy"), "--output", p("y.npy"), "--targets",
          p("t2.npy")], "expected 4x1"),
    ]:
        r = run("qkan", *args, *(["--quiet", "--output", p("o.safetensors"), "--history", p("o.csv"), "--plot", ""]
                                 if args[0] == "fit" else []))
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert pattern in r.stderr, (args, r.stderr)


def test_device_cuda_runs_or_says_why_not(tmp_path):
    """`--device cuda` on fit, eval and bench: where CUDA cannot run (a build without it, or no
    visible GPU, as in CI) a clear error and exit status 1, nothing written; where it can, the
    command runs (a GPU machine's check that the option reaches the device)."""
    p = lambda name: str(tmp_path / name)
    r = run("qkan", "fit", "--steps", "1", "--quiet", "--output", p("m.safetensors"), "--history", p("h.csv"),
            "--plot", "")
    assert r.returncode == 0, r.stderr
    np.save(p("x.npy"), np.linspace(0, 1, 8).reshape(8, 1))
    np.save(p("t.npy"), np.zeros((8, 1)))
    cuda_runs = None
    for args in [["fit", "--steps", "2", "--quiet", "--optimizer", "adam", "--output", p("c.safetensors"),
                  "--history", p("c.csv"), "--plot", ""],
                 ["eval", "--model", p("m.safetensors"), "--input", p("x.npy"), "--output", p("y.npy"),
                  "--targets", p("t.npy")],
                 ["bench", "--widths", "2,3", "--batch", "16", "--repeats", "1", "--warmup", "0"]]:
        r = run("qkan", *args, "--device", "cuda")
        if cuda_runs is None:
            cuda_runs = r.returncode == 0
        if cuda_runs:
            assert r.returncode == 0, (args, r.stderr)
        else:
            assert r.returncode == 1, (args, r.returncode, r.stderr)
            assert "cannot run the model on CUDA" in r.stderr, (args, r.stderr)
            assert not any(os.path.exists(p(n)) for n in ["c.safetensors", "c.csv", "y.npy"])
