"""The run: the model, optimizer, scaler and batches of one training setup, and the training step."""
from __future__ import annotations

import contextlib
import os
import tempfile

from ._torch import null_context, require_torch, torch
from .distributed import loss_context
from .model import (HFTrainModule, LossComputer, _apply_lora, _build_hf, _init_weights, _quantize_linears,
                    build_reference, materialize, sdpa_backend_context, torch_dtype)

PHASES = ("forward", "backward", "optimizer")


class Run:
    """Everything one training step needs."""

    def __init__(self, plan, device):
        self.plan = plan
        self.device = torch.device(device)
        self.model = None      # the module called for the loss (maybe DDP-wrapped)
        self.inner = None      # the unwrapped module
        self.optimizer = None
        self.per_param_optimizers = None
        self.scaler = None
        self.batches = []
        self.process_group = False


def build_run(plan, device="cuda", seed=0):
    require_torch()
    run = Run(plan, device)
    dev = run.device
    torch.manual_seed(seed)
    prec, fin = plan["precision"], plan["finetune"]
    lora = fin["method"] in ("lora", "qlora")
    loss = LossComputer(plan)
    weight_dtype = torch_dtype(prec["base_dtype"] if lora else prec["param_dtype"])
    if plan["impl"] == "hf":
        hf_model = _build_hf(plan["hf"], dev, weight_dtype)
        _init_weights(hf_model)
        if plan["recompute"]["mode"] == "full":
            hf_model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model = HFTrainModule(hf_model, loss)
    elif fin["method"] == "qlora":
        model = materialize(build_reference(plan, "meta", weight_dtype, loss), "cpu")
        _quantize_linears(model, fin, torch_dtype(prec["autocast_dtype"] or prec["base_dtype"]))
        model = model.to(dev)  # bitsandbytes quantises on the transfer
        model.tie()
        model.configure_recompute(plan["recompute"])
    elif plan.get("layout"):
        model = _build_sharded(run, plan, dev, weight_dtype, loss)
    else:
        model = materialize(build_reference(plan, "meta", weight_dtype, loss), dev)
        model.configure_recompute(plan["recompute"])
    if lora:
        model = _apply_lora(model, fin)
    model.train()
    run.inner = model
    params = [p for p in model.parameters() if p.requires_grad]
    run.params_total = sum(p.numel() for p in model.parameters())
    run.params_trainable = sum(p.numel() for p in params)

    if plan["engine"] == "ddp":
        import torch.distributed as dist
        if not dist.is_initialized():
            fd, path = tempfile.mkstemp(prefix="llmem-probe-pg-")
            os.close(fd)
            os.unlink(path)
            dist.init_process_group("nccl" if dev.type == "cuda" else "gloo", init_method="file://" + path,
                                    rank=0, world_size=1)
            run.process_group = True
        ddp = plan["ddp"]
        extra = {} if ddp["bucket_cap_mb"] is None else {"bucket_cap_mb": ddp["bucket_cap_mb"]}
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[dev.index or 0] if dev.type == "cuda" else None, broadcast_buffers=False,
            gradient_as_bucket_view=ddp["gradient_as_bucket_view"],
            find_unused_parameters=ddp["find_unused_parameters"], **extra)
    run.model = model

    opt = plan["optimizer"]
    run.optimizer_factory = _optimizer_factory(opt)
    if opt["in_backward"]:
        run.per_param_optimizers = {p: run.optimizer_factory([p]) for p in params}

        def hook(p):
            o = run.per_param_optimizers[p]
            o.step()
            o.zero_grad(set_to_none=True)

        for p in params:
            p.register_post_accumulate_grad_hook(hook)
    else:
        run.optimizer = run.optimizer_factory(params)
    if prec["grad_scaler"]:
        try:
            run.scaler = torch.amp.GradScaler(dev.type, init_scale=1.0)
        except (AttributeError, TypeError):
            run.scaler = torch.cuda.amp.GradScaler(init_scale=1.0)
    g = torch.Generator(device="cpu").manual_seed(seed + 1)
    V = plan["model"]["vocab"]
    for _ in range(plan["grad_accum"]):
        ids = torch.randint(0, V, (plan["micro_batch"], plan["seq_len"]), generator=g).to(dev)
        labels = torch.randint(0, V, (plan["micro_batch"], plan["seq_len"]), generator=g).to(dev)
        run.batches.append((ids, labels))
    return run


def _build_sharded(run, plan, dev, weight_dtype, loss):
    """Rank 0 of plan["layout"]: the fake process group, TP then FSDP2 on the meta-device decoder,
    then only this rank's shards materialised (torchtitan's meta-device init)."""
    from .distributed import apply_fsdp, apply_tp, build_mesh, init_fake_world
    lay = plan["layout"]
    run.process_group = init_fake_world(lay["world"], dev)
    fsdp_mesh, tp_mesh = build_mesh(lay, dev)
    model = build_reference(plan, "meta", weight_dtype, loss)
    if tp_mesh is not None:
        apply_tp(model, tp_mesh, lay["sp"], lay["loss_parallel"])
    apply_fsdp(model, fsdp_mesh, lay, torch_dtype)
    model = model.to_empty(device=dev)
    model.tie()  # no-op where to_empty kept the shared parameter (swap_tensors for DTensor)
    _init_weights(model)
    model.configure_recompute(plan["recompute"])
    return model


def _optimizer_factory(opt):
    cls_path = opt["class"]
    mod_name, cls_name = cls_path.rsplit(".", 1)
    if mod_name.startswith("bitsandbytes"):
        import bitsandbytes.optim as bo
        cls = getattr(bo, cls_name)
    else:
        cls = getattr(torch.optim, cls_name)
    lr = {"SGD": 1e-4, "Adafactor": 1e-3}.get(cls_name, 1e-5)
    kwargs = dict(opt["kwargs"])
    return lambda params: cls(params, lr=lr, **kwargs)


def _autocast(run):
    ad = run.plan["precision"]["autocast_dtype"]
    if not ad:
        return null_context()
    return torch.autocast(device_type=run.device.type, dtype=torch_dtype(ad))


def _optimizer_has_state(run):
    opts = list(run.per_param_optimizers.values()) if run.per_param_optimizers else [run.optimizer]
    return any(len(o.state) > 0 for o in opts)


def train_step(run, mark):
    """One optimizer step over grad_accum micro-batches; mark(phase) at each boundary."""
    model, n = run.model, len(run.batches)
    with sdpa_backend_context(run.plan["attention"]), loss_context(run.plan.get("layout")):
        for i, (ids, labels) in enumerate(run.batches):
            sync = contextlib.nullcontext() if i == n - 1 or not hasattr(model, "no_sync") else model.no_sync()
            with sync:
                mark("forward")
                with _autocast(run):
                    loss = model(ids, labels) / n
                mark("backward")
                if run.scaler is not None:
                    run.scaler.scale(loss).backward()
                else:
                    loss.backward()
                loss_value = loss.detach()
                if hasattr(loss_value, "full_tensor"):  # a replicated DTensor under loss_parallel()
                    loss_value = loss_value.full_tensor()
                del loss
    mark("optimizer")
    if run.optimizer is not None:
        if run.scaler is not None:
            run.scaler.step(run.optimizer)
            run.scaler.update()
        else:
            run.optimizer.step()
        run.optimizer.zero_grad(set_to_none=run.plan["optimizer"]["set_to_none"])
    mark(None)
    return loss_value
