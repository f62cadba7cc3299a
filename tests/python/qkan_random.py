"""Random weights for qkan.QKAN models in the tests."""
import torch


def randomise(model, gen):
    """Draws every entry of `model`'s state_dict at random in [-1, 1] (the mask partly zero), so
    that no term of the layer sum can be wrong unnoticed, and loads it through load_state_dict,
    which is how qkan refreshes its cached "mask is identity" / "bias is zero" flags."""
    sd = {}
    for name, t in model.state_dict().items():
        if name.endswith("mask"):
            sd[name] = (torch.rand(t.shape, generator=gen) > 0.2).to(t.dtype)
        else:
            sd[name] = (torch.rand(t.shape, generator=gen, dtype=torch.float64) * 2 - 1).to(t.dtype)
    model.load_state_dict(sd)
    return model
