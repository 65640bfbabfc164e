"""Rank 0 of a multi-rank layout on one GPU: the fake process group, the device mesh, torchtitan's
Llama TP plan on the reference decoder, and FSDP2's fully_shard (see layout.py for the plan)."""
from __future__ import annotations

from ._torch import null_context, torch


def init_fake_world(world, device):
    """dist.init_process_group("fake") as rank 0 of `world` (torch/testing/_internal/distributed/fake_pg.py)."""
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore  # registers backend "fake"
    if device.type == "cuda":
        torch.cuda.set_device(device.index or 0)
    if not dist.is_initialized():
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
        return True
    return False


def build_mesh(layout, device):
    """The device mesh: (dp_replicate,) dp_shard (, tp); FSDP's and TP's sub-meshes."""
    from torch.distributed.device_mesh import init_device_mesh
    dims = [(n, layout[n]) for n in ("dp_replicate", "dp_shard", "tp") if layout[n] > 1 or n == "dp_shard"]
    mesh = init_device_mesh(device.type, tuple(s for _, s in dims), mesh_dim_names=tuple(n for n, _ in dims))
    fsdp = mesh["dp_replicate", "dp_shard"] if layout["dp_replicate"] > 1 else mesh["dp_shard"]
    return fsdp, (mesh["tp"] if layout["tp"] > 1 else None)


def apply_tp(model, tp_mesh, sp, loss_parallel):
    """torchtitan's Llama plan (torchtitan/models/llama3/infra/parallelize.py apply_tp) on the reference decoder."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, RowwiseParallel,
                                                   SequenceParallel, parallelize_module)
    seq = Shard(1) if sp else Replicate()
    top = {"embed_tokens": RowwiseParallel(input_layouts=Replicate(), output_layouts=seq),
           "lm_head": ColwiseParallel(input_layouts=seq, output_layouts=Shard(-1) if loss_parallel else Replicate(),
                                      use_local_output=not loss_parallel)}
    if sp and model.norm is not None:
        top["norm"] = SequenceParallel()
    parallelize_module(model, tp_mesh, top)
    for blk in model.layers:
        plan = {"attn.q_proj": ColwiseParallel(), "attn.k_proj": ColwiseParallel(),
                "attn.v_proj": ColwiseParallel(), "attn.o_proj": RowwiseParallel(output_layouts=seq),
                "mlp.up_proj": ColwiseParallel(), "mlp.down_proj": RowwiseParallel(output_layouts=seq)}
        if blk.mlp.gated:
            plan["mlp.gate_proj"] = ColwiseParallel()
        if sp:
            plan.update({"input_norm": SequenceParallel(), "post_attention_norm": SequenceParallel(),
                         "attn": PrepareModuleInput(input_layouts=(Shard(1), None, None),
                                                    desired_input_layouts=(Replicate(), None, None)),
                         "mlp": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),))})
        parallelize_module(blk, tp_mesh, plan)


def apply_fsdp(model, fsdp_mesh, layout, dtype_of):
    """fully_shard per decoder layer (+ embedding and output projection), then the root
    (torchtitan apply_fsdp; torchtune shard_model for shard_root_modules)."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    mp = layout.get("mp")
    policy = MixedPrecisionPolicy(param_dtype=dtype_of(mp["param_dtype"]), reduce_dtype=dtype_of(mp["reduce_dtype"])) \
        if mp else MixedPrecisionPolicy()
    kw = {"mesh": fsdp_mesh, "mp_policy": policy, "reshard_after_forward": layout["reshard_after_forward"]}
    for blk in model.layers:
        fully_shard(blk, **kw)
    if layout["shard_root_modules"] and not model.m["tied_embeddings"]:
        fully_shard(model.embed_tokens, **kw)
        fully_shard(model.lm_head, **kw)
    fully_shard(model, **kw)  # the root keeps its parameters gathered from forward to backward


def loss_context(layout):
    """torch.distributed.tensor.parallel.loss_parallel() around the loss and its backward, or nothing."""
    if layout and layout.get("loss_parallel"):
        from torch.distributed.tensor.parallel import loss_parallel
        return loss_parallel()
    return null_context()


def local(t):
    """The local shard of a DTensor (or the tensor)."""
    return t.to_local() if hasattr(t, "to_local") else t
