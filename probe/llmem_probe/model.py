"""The model: the reference decoder (plain PyTorch, HF Llama-style eager modules), the loss,
the transformers model from_config, random weights, QLoRA quantisation and LoRA adapters."""
from __future__ import annotations

from ._torch import F, nn, null_context, require_torch, torch, torch_at_least
from ._torch import Module as _Module
from .config import DEFAULTS

TORCH_DTYPE_NAMES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


# --------------------------------------------------------------------------
# The reference decoder (plain PyTorch; HF Llama-style eager modules)
# --------------------------------------------------------------------------

class RMSNorm(_Module):
    def __init__(self, dim, eps=1e-6, device=None, dtype=None):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, device=device, dtype=dtype))
        self.eps = eps

    def forward(self, x):  # transformers LlamaRMSNorm
        dt = x.dtype
        x = x.to(torch.float32)
        var = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + self.eps)
        return self.weight * x.to(dt)


def make_norm(kind, dim, fk):
    if kind == "rmsnorm":
        return RMSNorm(dim, **fk)
    return nn.LayerNorm(dim, eps=1e-5, **fk)


def _rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def _repeat_kv(x, n_rep):
    if n_rep == 1:
        return x
    b, g, s, d = x.shape
    return x[:, :, None, :, :].expand(b, g, n_rep, s, d).reshape(b, g * n_rep, s, d)


def sdpa_backend_context(kind):
    """Restrict torch SDPA: flash -> flash + memory-efficient kernels, sdpa_math -> math."""
    if kind not in ("flash", "sdpa_math") or torch is None:
        return null_context()
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backs = ([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION] if kind == "flash"
                 else [SDPBackend.MATH])
        return sdpa_kernel(backs)
    except ImportError:
        if hasattr(torch.backends.cuda, "sdp_kernel"):
            flash = kind == "flash"
            return torch.backends.cuda.sdp_kernel(enable_flash=flash, enable_mem_efficient=flash,
                                                  enable_math=not flash)
        return null_context()


class AttentionRuntime:
    """What the attention actually did (recorded in the result)."""

    def __init__(self, kind, enable_gqa):
        self.kind = kind
        self.enable_gqa = enable_gqa
        self.gqa_path = None


class Attention(_Module):
    def __init__(self, m, rt, dropout, fk, causal=True):
        super().__init__()
        h, a, g, d = m["hidden"], m["heads"], m["kv_heads"], m["head_dim"]
        self.a, self.g, self.d = a, g, d
        qkv_bias = bool(m["bias"] or m["qkv_bias"])
        self.q_proj = nn.Linear(h, a * d, bias=qkv_bias, **fk)
        self.k_proj = nn.Linear(h, g * d, bias=qkv_bias, **fk)
        self.v_proj = nn.Linear(h, g * d, bias=qkv_bias, **fk)
        self.o_proj = nn.Linear(a * d, h, bias=bool(m["bias"]), **fk)
        self.qk_norm = m["qk_norm"]
        if self.qk_norm == "head":
            self.q_norm, self.k_norm = RMSNorm(d, **fk), RMSNorm(d, **fk)
        elif self.qk_norm == "full":
            self.q_norm, self.k_norm = RMSNorm(a * d, **fk), RMSNorm(g * d, **fk)
        self.sinks = nn.Parameter(torch.zeros(a, **fk)) if m["attn_sinks"] else None
        self.rope = m["position"] == "rope"
        self.rt = rt
        self.p = dropout
        self.causal = causal
        self.checkpoint_core = False

    def core(self, q, k, v):
        """Attention kernel: [b, a, s, d] x [b, g, s, d] -> [b, a, s, d]."""
        n_rep = self.a // self.g
        p = self.p if self.training else 0.0
        rt = self.rt
        if rt.kind == "eager":
            k, v = _repeat_kv(k, n_rep), _repeat_kv(v, n_rep)
            scores = torch.matmul(q, k.transpose(2, 3)) * (self.d ** -0.5)
            if self.causal:
                s = q.shape[-2]
                mask = torch.full((s, s), torch.finfo(self._mask_dtype).min, device=q.device,
                                  dtype=self._mask_dtype).triu_(1)
                scores = scores + mask
            if self.sinks is not None:
                sink = self.sinks.reshape(1, -1, 1, 1).expand(q.shape[0], -1, q.shape[-2], 1).to(scores.dtype)
                scores = torch.cat([scores, sink], dim=-1)
            probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
            if self.sinks is not None:
                probs = probs[..., :-1]
            probs = F.dropout(probs, p=p, training=self.training)
            return torch.matmul(probs, v)
        with sdpa_backend_context(rt.kind):
            if n_rep > 1 and rt.kind == "flash" and rt.enable_gqa and rt.gqa_path != "repeat_kv":
                try:
                    out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=self.causal,
                                                         enable_gqa=True)
                    rt.gqa_path = "enable_gqa"
                    return out
                except RuntimeError as e:  # no kernel for GQA here (e.g. fp32 on the efficient kernel)
                    rt.gqa_path = "repeat_kv"
                    rt.gqa_fallback_reason = str(e).splitlines()[0][:200]
            if n_rep > 1:
                k, v = _repeat_kv(k, n_rep), _repeat_kv(v, n_rep)
                rt.gqa_path = rt.gqa_path or "repeat_kv"
            return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=self.causal)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.qk_norm == "full":
            q, k = self.q_norm(q), self.k_norm(k)
        q = q.view(b, s, -1, self.d)  # -1: the local heads under TP
        k = k.view(b, s, -1, self.d)
        if self.qk_norm == "head":
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        v = v.view(b, s, -1, self.d).transpose(1, 2)
        if self.rope:  # transformers apply_rotary_pos_emb
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
        self._mask_dtype = x.dtype
        if self.checkpoint_core:
            out = torch.utils.checkpoint.checkpoint(self.core, q, k, v, use_reentrant=False)
        else:
            out = self.core(q, k, v)
        out = out.transpose(1, 2).reshape(b, s, -1)
        return self.o_proj(out)


class MLP(_Module):
    def __init__(self, m, fk):
        super().__init__()
        h, f, bias = m["hidden"], m["ffn_hidden"], bool(m["bias"])
        self.gated = m["mlp"] == "gated"
        if self.gated:
            self.gate_proj = nn.Linear(h, f, bias=bias, **fk)
        self.up_proj = nn.Linear(h, f, bias=bias, **fk)
        self.down_proj = nn.Linear(f, h, bias=bias, **fk)

    def forward(self, x):
        if self.gated:  # transformers LlamaMLP
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        return self.down_proj(F.gelu(self.up_proj(x)))


class Block(_Module):
    def __init__(self, m, rt, dropout, fk, causal=True):
        super().__init__()
        h = m["hidden"]
        self.n = m["norms_per_layer"]
        self.input_norm = make_norm(m["norm"], h, fk)
        if self.n >= 2:
            self.post_attention_norm = make_norm(m["norm"], h, fk)
        if self.n == 4:
            self.pre_feedforward_norm = make_norm(m["norm"], h, fk)
            self.post_feedforward_norm = make_norm(m["norm"], h, fk)
        self.attn = Attention(m, rt, dropout, fk, causal)
        self.mlp = MLP(m, fk)
        self.p = dropout
        self.checkpoint_mlp = False

    def _mlp(self, x):
        if self.checkpoint_mlp:
            return torch.utils.checkpoint.checkpoint(self.mlp, x, use_reentrant=False)
        return self.mlp(x)

    def _drop(self, x):
        return F.dropout(x, p=self.p, training=self.training) if self.p else x

    def forward(self, x, cos, sin):
        if self.n == 1:  # parallel attention + MLP on one norm (Falcon-7B)
            y = self.input_norm(x)
            return x + self._drop(self.attn(y, cos, sin)) + self._drop(self._mlp(y))
        if self.n == 2:  # pre-norm
            x = x + self._drop(self.attn(self.input_norm(x), cos, sin))
            return x + self._drop(self._mlp(self.post_attention_norm(x)))
        # Gemma sandwich norms
        x = x + self._drop(self.post_attention_norm(self.attn(self.input_norm(x), cos, sin)))
        return x + self._drop(self.post_feedforward_norm(self._mlp(self.pre_feedforward_norm(x))))


def _per_op_context_fn():
    """torchtitan's op-level SAC policy: save every other mm and the attention kernels' outputs."""
    from collections import defaultdict
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    ops = torch.ops.aten
    save = {ops.mm.default}
    for name in ("_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
                 "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_flash_attention_for_cpu"):
        op = getattr(ops, name, None)
        if op is not None:
            save.add(op.default)
    meta = defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        key = "%s_mm_count" % ("recompute" if ctx.is_recompute else "forward")
        if func == ops.mm.default:
            meta[key] += 1
        keep = func in save and not (func == ops.mm.default and meta[key] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


class LossComputer:
    """Head + loss on the final hidden states, by plan["loss"]."""

    def __init__(self, plan):
        self.kind = plan["loss"]["kind"]
        self.chunks = plan["loss"]["chunks"]
        self._compiled = None
        self._liger = None

    def __call__(self, hidden, labels, lm_head=None, pooler=None, classifier=None):
        kind = self.kind
        if kind == "none":
            return hidden.float().mean()
        if kind == "classification":
            pooled = torch.tanh(pooler(hidden[:, 0]))
            logits = classifier(pooled)
            return F.cross_entropy(logits.float(), labels[:, 0] % logits.shape[-1])
        if kind == "chunked":
            outs = [lm_head(hc) for hc in hidden.chunk(self.chunks, dim=1)]
            labs = labels.chunk(self.chunks, dim=1)
            total = None
            for o, y in zip(outs, labs):
                part = F.cross_entropy(o.float().reshape(-1, o.shape[-1]), y.reshape(-1), reduction="sum")
                total = part if total is None else total + part
            return total / labels.numel()
        if kind == "fused":
            if self._liger is None:
                from liger_kernel.transformers import LigerFusedLinearCrossEntropyLoss
                self._liger = LigerFusedLinearCrossEntropyLoss()
            return self._liger(lm_head.weight, hidden.reshape(-1, hidden.shape[-1]), labels.reshape(-1),
                               lm_head.bias)
        logits = lm_head(hidden)
        if kind == "compiled":
            if self._compiled is None:
                def ce(lg, y):
                    return F.cross_entropy(lg.flatten(0, 1).float(), y.flatten(0, 1))
                self._compiled = torch.compile(ce)
            return self._compiled(logits, labels)
        if kind == "hf_upcast":
            logits = logits.float()
            shift = logits[..., :-1, :].contiguous()
            y = labels[..., 1:].contiguous()
            return F.cross_entropy(shift.view(-1, shift.shape[-1]), y.view(-1))
        if kind == "loss_parallel":  # vocabulary-sharded DTensor logits under loss_parallel() (TP)
            return F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.view(-1))


class ReferenceDecoder(_Module):
    """Embedding, N blocks, final norm, head; forward(ids, labels) -> loss."""

    def __init__(self, m, dropout=0.0, device=None, dtype=None, attention="flash", enable_gqa=False,
                 loss=None):
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        h, V = m["hidden"], m["vocab"]
        self.m = dict(m)
        self.head_kind = m["head"]
        causal = m["head"] == "lm"
        self.rt = AttentionRuntime(attention, enable_gqa)
        self.embed_tokens = nn.Embedding(V, h, **fk)
        self.embed_positions = nn.Embedding(m["max_positions"], h, **fk) if m["position"] == "learned" else None
        self.token_type = nn.Embedding(m["type_vocab"], h, **fk) if m["type_vocab"] else None
        self.embedding_norm = make_norm(m["norm"], h, fk) if m["embedding_norm"] else None
        self.layers = nn.ModuleList([Block(m, self.rt, dropout, fk, causal) for _ in range(m["layers"])])
        self.norm = make_norm(m["norm"], h, fk) if m["final_norm"] else None
        self.lm_head = self.pooler = self.classifier = None
        if m["head"] == "lm":
            if m["tied_embeddings"]:
                self.lm_head = nn.Linear(h, V, bias=False, device="meta")
                self.lm_head.weight = self.embed_tokens.weight
                if m["lm_head_bias"]:
                    self.lm_head.bias = nn.Parameter(torch.zeros(V, **fk))
            else:
                self.lm_head = nn.Linear(h, V, bias=bool(m["lm_head_bias"]), **fk)
        elif m["head"] == "classification":
            self.pooler = nn.Linear(h, h, **fk)
            self.classifier = nn.Linear(h, m["num_labels"], **fk)
        self.p = dropout
        self.rope = m["position"] == "rope"
        self.checkpoint_layers = set()
        self.context_fn = None
        self.loss = loss

    def tie(self):
        """to_empty() unties shared parameters; tie the head to the embedding again."""
        if self.lm_head is not None and self.m["tied_embeddings"]:
            self.lm_head.weight = self.embed_tokens.weight

    def configure_recompute(self, rec):
        self.checkpoint_layers = set(rec["layers"]) if rec["mode"] in ("full", "per_op") else set()
        self.context_fn = _per_op_context_fn if rec["mode"] == "per_op" else None
        for blk in self.layers:
            blk.checkpoint_mlp = rec["mode"] == "selective" and "mlp" in rec["modules"]
            blk.attn.checkpoint_core = rec["mode"] == "selective" and "core_attn" in rec["modules"]

    def _rope(self, x, s):
        d = self.m["head_dim"]
        with torch.autocast(device_type=x.device.type, enabled=False):
            inv = 1.0 / (500000.0 ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d))
            pos = torch.arange(s, device=x.device, dtype=torch.float32)
            freqs = torch.outer(pos, inv)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype)[None, None], emb.sin().to(x.dtype)[None, None]

    def hidden_states(self, ids):
        s = ids.shape[1]
        x = self.embed_tokens(ids)
        if self.embed_positions is not None:
            x = x + self.embed_positions(torch.arange(s, device=ids.device))[None]
        if self.token_type is not None:
            x = x + self.token_type(torch.zeros_like(ids))
        if self.embedding_norm is not None:
            x = self.embedding_norm(x)
        if self.p:
            x = F.dropout(x, p=self.p, training=self.training)
        cos, sin = self._rope(x, s) if self.rope else (None, None)
        for i, layer in enumerate(self.layers):
            if i in self.checkpoint_layers:
                kw = {"use_reentrant": False}
                if self.context_fn is not None:
                    kw["context_fn"] = self.context_fn
                x = torch.utils.checkpoint.checkpoint(layer, x, cos, sin, **kw)
            else:
                x = layer(x, cos, sin)
        if self.norm is not None:
            x = self.norm(x)
        return x

    def forward(self, ids, labels):
        return self.loss(self.hidden_states(ids), labels, self.lm_head, self.pooler, self.classifier)


class HFTrainModule(_Module):
    """A transformers causal LM with the probe's loss on its final hidden states."""

    def __init__(self, hf_model, loss):
        super().__init__()
        self.hf = hf_model
        self.loss = loss

    def forward(self, ids, labels):
        out = self.hf.base_model(input_ids=ids, use_cache=False)
        return self.loss(out[0], labels, self.hf.get_output_embeddings())


def torch_dtype(name):
    return getattr(torch, TORCH_DTYPE_NAMES[name])


def build_reference(plan, device, dtype, loss=None):
    return ReferenceDecoder(plan["model"], dropout=plan["dropout"], device=device, dtype=dtype,
                            attention=plan["attention"], enable_gqa=bool(detect_gqa()),
                            loss=loss or LossComputer(plan))


def detect_gqa():
    return torch is not None and hasattr(F, "scaled_dot_product_attention") and torch_at_least(2, 5)


def count_params_meta(model_keys, impl="reference", hf=None):
    """Parameter count of the built module on the meta device (no memory needed)."""
    require_torch()
    if impl == "hf":
        model = _build_hf(hf, "meta", torch.float32)
    else:
        m = dict(DEFAULTS["model"], **model_keys)
        if m.get("kv_heads") is None:
            m["kv_heads"] = m["heads"]
        if m.get("head_dim") is None:
            m["head_dim"] = m["hidden"] // m["heads"]
        model = ReferenceDecoder(m, device="meta", dtype=torch.float32)
    return sum(p.numel() for p in model.parameters())


def module_shapes(model):
    """Parameter shapes: layer 0 stands for every layer."""
    rows, n_layers = [], 0
    for name, p in model.named_parameters():
        parts = name.split(".")
        if "layers" in parts:
            i = parts.index("layers")
            if parts[i + 1] != "0":
                continue
            name = ".".join(parts[:i + 1] + ["*"] + parts[i + 2:])
        rows.append((name, list(p.shape), p.numel()))
    for mod in model.modules():
        if isinstance(mod, nn.ModuleList):
            n_layers = max(n_layers, len(mod))
    return rows, n_layers


def _build_hf(hf, device, dtype):
    from transformers import AutoConfig, AutoModelForCausalLM
    import transformers
    cfg = AutoConfig.for_model(hf["model_type"], **hf["config"])
    major = int(transformers.__version__.split(".")[0])
    kw = {"attn_implementation": hf["attn_implementation"], ("dtype" if major >= 5 else "torch_dtype"): dtype}
    with torch.device(device):  # from_config never loads weights; random init on the target device
        model = AutoModelForCausalLM.from_config(cfg, **kw)
    return model


# --------------------------------------------------------------------------
# Random weights, quantisation, adapters
# --------------------------------------------------------------------------

def _init_weights(model, std=0.02):
    """Random weights: N(0, std) matrices and tables, unit norms, zero biases and sinks."""
    with torch.no_grad():
        for mod in model.modules():
            w = getattr(mod, "weight", None)
            if not isinstance(w, torch.Tensor) or w.device.type == "meta" or not w.dtype.is_floating_point:
                continue
            w = w.to_local() if hasattr(w, "to_local") else w  # a DTensor's own shard (FSDP2, TP)
            b = getattr(mod, "bias", None)
            b = b.to_local() if hasattr(b, "to_local") else b
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                w.normal_(0.0, std)
            elif isinstance(mod, (RMSNorm, nn.LayerNorm)):
                w.fill_(1.0)
            if isinstance(b, torch.Tensor) and b.dtype.is_floating_point:
                b.zero_()
            if isinstance(mod, Attention) and mod.sinks is not None:
                (mod.sinks.to_local() if hasattr(mod.sinks, "to_local") else mod.sinks).zero_()


def materialize(model, device):
    """A meta-device module on `device`, tied again, with random weights (no double init)."""
    model = model.to_empty(device=device)
    model.tie()
    _init_weights(model)
    return model


def _quantize_linears(model, fin, compute_dtype):
    """QLoRA: every linear of the decoder layers becomes a bitsandbytes 4-bit / int8 linear."""
    import bitsandbytes as bnb
    for layer in model.layers:
        for parent in list(layer.modules()):
            for cname, child in list(parent.named_children()):
                if not isinstance(child, nn.Linear):
                    continue
                w = child.weight.data
                if fin["quant"] == "int8":
                    new = bnb.nn.Linear8bitLt(child.in_features, child.out_features, bias=child.bias is not None,
                                              has_fp16_weights=False, threshold=6.0)
                    new.weight = bnb.nn.Int8Params(w, requires_grad=False, has_fp16_weights=False)
                else:
                    new = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                            compute_dtype=compute_dtype, compress_statistics=fin["double_quant"],
                                            quant_type=fin["quant"])
                    new.weight = bnb.nn.Params4bit(w, requires_grad=False, compress_statistics=fin["double_quant"],
                                                   quant_type=fin["quant"])
                if child.bias is not None:
                    new.bias = nn.Parameter(child.bias.data, requires_grad=False)
                setattr(parent, cname, new)


def _apply_lora(model, fin):
    import peft
    cfg = peft.LoraConfig(r=fin["rank"], lora_alpha=fin["alpha"], lora_dropout=fin["dropout"],
                          target_modules=list(fin["targets"]), bias="none")
    model = peft.inject_adapter_in_model(cfg, model)
    dt = torch_dtype(fin["adapter_dtype"])
    for name, p in model.named_parameters():
        if "lora_" in name:
            p.data = p.data.to(dt)
            p.requires_grad_(True)
        else:
            p.requires_grad_(False)
    return model
