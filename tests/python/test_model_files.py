"""Models through files between qkan (PyTorch) and lockstep's C++ command-line tool.

* Gradients: a qkan.QKAN with random weights, saved as safetensors with its state_dict names;
  `lockstep qkan eval --targets ... --gradients ...` computes the loss and its gradient with
  respect to every parameter in C++; torch autograd through qkan's exact solver computes the
  same, in float64 (tolerance 1e-9) and in float32 (qkan's default; float32 tolerance).
* Round trips: a model written by `lockstep qkan fit` loads strictly into qkan.QKAN and comes
  back through qkan's state_dict bit for bit; a qkan model passed through `lockstep qkan fit
  --steps 0` comes back into qkan bit for bit.
"""
import os
import subprocess

import numpy as np
import pytest
import torch

import qkan
from safetensors.torch import load_file, save_file

from qkan_random import randomise

CLI = os.environ.get("LOCKSTEP_CLI", "")
if not (CLI and os.access(CLI, os.X_OK)):
    pytest.skip("set LOCKSTEP_CLI to the lockstep command-line tool (scripts/test.sh does)",
                allow_module_level=True)

PRECISION = {  # qkan's parameter and state dtypes, the tolerance (absolute, relative to the largest gradient)
    "f64": (torch.float64, torch.complex128, 1e-9),
    # float32: qkan's default. Each gradient sums B·(O or I)·reps float32 terms (~6e-8 relative
    # each); 2e-5 of the largest entry leaves room for that and for the loss's own rounding.
    "f32": (torch.float32, torch.complex64, 2e-5),
}


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)


def random_qkan(gen, width, p_dtype, c_dtype, **kw):
    """qkan.QKAN with every parameter drawn at random (qkan_random.randomise), every weight
    trainable except the encoding, which the case sets."""
    m = qkan.QKAN(width, reps=kw.pop("reps", 3), device="cpu", p_dtype=p_dtype, c_dtype=c_dtype,
                  postact_weight_trainable=True, postact_bias_trainable=True, ba_trainable=True, **kw)
    return randomise(m, gen)


CASES = [
    dict(width=[2, 3, 1], flags=[], kw={}, loss="mse"),
    dict(width=[3, 4, 2], flags=["--preacts-trainable", "--base-activation", "gelu"],
         kw=dict(preact_trainable=True, base_activation="gelu"), loss="mse"),
    dict(width=[3, 2], flags=["--measure", "z", "--ansatz", "mix"], kw=dict(fast_measure=False, ansatz="mix"),
         loss="mse"),
    dict(width=[2, 4, 3], flags=["--ansatz", "rpz", "--base-activation", "tanh"],
         kw=dict(ansatz="rpz_encoding", base_activation="tanh", reps=2), loss="mse"),
    dict(width=[4, 5, 3], flags=["--preacts-trainable"], kw=dict(preact_trainable=True), loss="cross_entropy"),
]


@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c["width"])) + "-" + c["loss"]
                         + "".join(c["flags"]))
def test_gradients_match_torch_autograd(tmp_path, case, precision):
    p_dtype, c_dtype, tol = PRECISION[precision]
    gen = torch.Generator().manual_seed(abs(hash((str(case), precision))) % (2**31))
    m = random_qkan(gen, case["width"], p_dtype, c_dtype, **case["kw"])
    for name, p in m.named_parameters():  # autograd for every weight the loss depends on, not the mask
        p.requires_grad_(not name.endswith("mask"))
    save_file({k: v.contiguous() for k, v in m.state_dict().items()}, str(tmp_path / "m.safetensors"))
    B, O = 37, case["width"][-1]
    x = (torch.rand(B, case["width"][0], generator=gen, dtype=torch.float64) * 2 - 1).to(p_dtype)
    if case["loss"] == "mse":
        t = (torch.rand(B, O, generator=gen, dtype=torch.float64) * 2 - 1).to(p_dtype)
        loss = torch.nn.functional.mse_loss(m(x), t)
    else:
        t = torch.randint(0, O, (B,), generator=gen)
        loss = torch.nn.functional.cross_entropy(m(x), t)
    loss.backward()
    np.save(tmp_path / "x.npy", x.numpy())
    np.save(tmp_path / "t.npy", t.numpy().astype(np.float64))
    r = run("qkan", "eval", "--model", str(tmp_path / "m.safetensors"), "--input", str(tmp_path / "x.npy"),
            "--output", str(tmp_path / "y.npy"), "--targets", str(tmp_path / "t.npy"), "--loss", case["loss"],
            "--gradients", str(tmp_path / "g.safetensors"), *case["flags"])
    assert r.returncode == 0, r.stderr
    ours = float(r.stdout.split("loss ")[1].split()[0])
    assert abs(ours - loss.item()) <= tol * max(1.0, abs(loss.item())), (ours, loss.item())
    grads = load_file(str(tmp_path / "g.safetensors"))
    wanted = {name for name, p in m.named_parameters() if p.grad is not None}
    # Gradients for exactly the tensors the loss depends on (w and c only with the encoding on).
    assert set(grads) == wanted, (sorted(grads), sorted(wanted))
    for name, p in m.named_parameters():
        if name not in wanted:
            continue
        ref = p.grad.double()
        got = grads[name]
        assert got.dtype == torch.float64 and got.shape == ref.shape, name
        scale = max(ref.abs().max().item(), 1e-12)
        err = (got - ref).abs().max().item()
        assert err <= tol * scale, f"{name}: max |diff| {err:.3e}, largest gradient {scale:.3e}"


def tensors_bitwise_equal(a, b):
    assert set(a) == set(b), (sorted(a), sorted(b))
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        assert a[k].contiguous().view(torch.uint8).equal(b[k].contiguous().view(torch.uint8)), k


def test_cpp_to_pytorch_to_cpp_is_exact(tmp_path):
    p = lambda name: str(tmp_path / name)
    r = run("qkan", "fit", "--steps", "3", "--widths", "1,3,2,1", "--reps", "2", "--quiet", "--output",
            p("cpp.safetensors"), "--history", p("h.csv"), "--plot", "")
    assert r.returncode == 0, r.stderr
    first = load_file(p("cpp.safetensors"))
    m = qkan.QKAN([1, 3, 2, 1], reps=2, device="cpu", preact_trainable=True, postact_weight_trainable=True,
                  postact_bias_trainable=True, ba_trainable=True)
    m.load_state_dict(first)  # strict: every name and shape
    save_file({k: v.contiguous() for k, v in m.state_dict().items()}, p("torch.safetensors"))
    tensors_bitwise_equal(first, load_file(p("torch.safetensors")))
    # And C++ reads qkan's file back to the same outputs as its own, bit for bit.
    np.save(p("x.npy"), np.linspace(-1, 1, 40, dtype=np.float32).reshape(-1, 1))
    for name in ("cpp", "torch"):
        r = run("qkan", "eval", "--model", p(f"{name}.safetensors"), "--input", p("x.npy"), "--output",
                p(f"y_{name}.npy"), "--preacts-trainable")
        assert r.returncode == 0, r.stderr
    assert np.load(p("y_cpp.npy")).tobytes() == np.load(p("y_torch.npy")).tobytes()


def test_pytorch_to_cpp_to_pytorch_is_exact(tmp_path):
    p = lambda name: str(tmp_path / name)
    gen = torch.Generator().manual_seed(11)
    m = random_qkan(gen, [2, 3, 1], torch.float32, torch.complex64, preact_trainable=True)
    sd = {k: v.contiguous() for k, v in m.state_dict().items()}
    save_file(sd, p("torch.safetensors"))
    np.save(p("x.npy"), np.zeros((4, 2)))
    np.save(p("y.npy"), np.zeros((4, 1)))
    # --steps 0: read the weights (float32 -> double), train nothing, write them (double -> float32).
    r = run("qkan", "fit", "--init", p("torch.safetensors"), "--steps", "0", "--train-x", p("x.npy"), "--train-y",
            p("y.npy"), "--test-x", p("x.npy"), "--test-y", p("y.npy"), "--quiet", "--output", p("cpp.safetensors"),
            "--history", p("h.csv"), "--plot", "")
    assert r.returncode == 0, r.stderr
    back = load_file(p("cpp.safetensors"))
    tensors_bitwise_equal(sd, back)
    m2 = qkan.QKAN([2, 3, 1], reps=3, device="cpu", preact_trainable=True, postact_weight_trainable=True,
                   postact_bias_trainable=True, ba_trainable=True)
    m2.load_state_dict(back)
    x = torch.rand(9, 2, generator=gen) * 2 - 1
    with torch.no_grad():
        assert m(x).equal(m2(x))
