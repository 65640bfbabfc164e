#!/usr/bin/env python3
"""Recount every catalog model's parameters from its config-v1 "model" keys.

Usage: python3 check_params.py [models.json]

Counting is HF-exact (what sum(p.numel() for p in model.parameters()) gives,
shared/tied tensors once).  Per decoder layer:

  attention (standard)  q h*a*d, k and v h*g*d each, o a*d*h
                        + biases when "bias": a*d + 2*g*d + h
                        + "qkv_bias" (bias on q, k, v only): a*d + 2*g*d
                        + "qk_norm": "none" (default) -> 0
                                     "head" -> 2*d  (one d-wide weight for q, one for k)
                                     "full" -> a*d + g*d (norm over the whole q / k projection)
                        + "attn_sinks": a (one learned logit per head)
  attention (MLA)       q_a h*qr + q_a_norm qr + q_b qr*a*(dn+dr)      (q_lora_rank > 0)
                        or q h*a*(dn+dr)                                (q_lora_rank 0)
                        kv_a h*(kvr+dr) + kv_a_norm kvr + kv_b kvr*a*(dn+dv) + o a*dv*h
  dense MLP             gated 3*h*F, plain 2*h*F; biases: gated 2F+h, plain F+h
  MoE MLP               experts E*(3*h*Fe) (+ E*(2Fe+h) biases when "bias"),
                        router h*E (+ E when moe.router_bias),
                        shared experts S*3*h*Fs (S = shared_experts, Fs = shared_expert_ffn_hidden)
                        (+ h when moe.shared_expert_gate)
  norms                 norms_per_layer (default 2) * n * h, n = 1 rmsnorm / 2 layernorm
                        (half of them in a layer whose mixer or MLP is "none")
  "attn_output_gate"    q_proj doubled: + h*a*d (query and gate, Qwen3-Next)
Per-layer kinds ("layer_types" mixers, "mlp_types" MLPs; a shorter list repeats):
  linear (Gated DeltaNet, Hk/Hv heads, dk/dv dims, K kernel):
                        h*(2*Hk*dk + 2*Hv*dv) + h*2*Hv + Hv*dv*h
                        + (2*Hk*dk + Hv*dv)*K + 2*Hv + dv
  ssm (Mamba-2, H heads of P, G groups, N state, K kernel; d_in = H*P):
                        h*(2*d_in + 2*G*N + H) + d_in*h + (d_in + 2*G*N)*K
                        (+ d_in + 2*G*N conv bias) + 3*H + d_in (+ 2*d_in + 2*G*N + H + h biases)
  none                  nothing (mixer), nothing (MLP)
Model level:
  embeddings V*h (+ max_positions*h learned, + type_vocab*h, + n*h "embedding_norm")
  final norm n*h unless "final_norm" is false
  head "lm": V*h unless tied_embeddings (+ V when "lm_head_bias")
  head "classification": pooler h*h + h, classifier num_labels*h + num_labels
  head "none": nothing
A layer i (0-based) is MoE when moe is set, i >= dense_layers and
(i - dense_layers) % layer_freq == 0  (Megatron's moe_layer_freq; 1: every layer).
Active parameters: total minus (E - top_k) experts in every MoE layer.
Exit status 1 if any model whose params_total_source is not "computed"
differs from its published params_total.
"""
import json
import os
import sys


def norm_width(m):
    return 1 if m.get("norm", "rmsnorm") == "rmsnorm" else 2


def attention_params(m):
    h = m["hidden"]
    a = m["heads"]
    g = m.get("kv_heads") or a
    d = m.get("head_dim") or h // a
    bias = m.get("bias", False)
    mla = m.get("mla")
    if mla:
        qr, kvr = mla["q_lora_rank"], mla["kv_lora_rank"]
        dn, dr, dv = mla["qk_nope_head_dim"], mla["qk_rope_head_dim"], mla["v_head_dim"]
        nw = norm_width(m)
        if qr:
            p = h * qr + nw * qr + qr * a * (dn + dr)
        else:
            p = h * a * (dn + dr)
        p += h * (kvr + dr) + nw * kvr + kvr * a * (dn + dv) + a * dv * h
        return p
    p = h * a * d + 2 * h * g * d + a * d * h
    if bias:
        p += a * d + 2 * g * d + h
    elif m.get("qkv_bias"):
        p += a * d + 2 * g * d
    qk = m.get("qk_norm", "none")
    if qk == "head":
        p += 2 * d
    elif qk == "full":
        p += a * d + g * d
    elif qk != "none":
        raise ValueError("qk_norm must be 'none', 'head' or 'full'")
    if m.get("attn_sinks"):
        p += a
    if m.get("attn_output_gate"):
        p += h * a * d
    return p


def linear_params(m):
    """Gated DeltaNet (transformers Qwen3NextGatedDeltaNet)."""
    h, lin = m["hidden"], m.get("linear") or {}
    hk, hv = lin.get("key_heads", 16), lin.get("value_heads", 32)
    dk, dv, k = lin.get("key_head_dim", 128), lin.get("value_head_dim", 128), lin.get("conv_kernel", 4)
    return h * (2 * hk * dk + 2 * hv * dv) + h * 2 * hv + hv * dv * h + (2 * hk * dk + hv * dv) * k + 2 * hv + dv


def ssm_params(m):
    """Mamba-2 (transformers NemotronHMamba2Mixer)."""
    h, ssm = m["hidden"], m.get("ssm") or {}
    heads, hd, g = ssm.get("heads", 128), ssm.get("head_dim", 64), ssm.get("groups", 8)
    n, k = ssm.get("state_size", 128), ssm.get("conv_kernel", 4)
    inner, conv = heads * hd, heads * hd + 2 * g * n
    p = h * (2 * inner + 2 * g * n + heads) + inner * h + conv * k + 3 * heads + inner
    if ssm.get("conv_bias", True):
        p += conv
    if ssm.get("bias", False):
        p += 2 * inner + 2 * g * n + heads + h
    return p


def vision_params(m):
    """A vision tower and its projector ("vision": kind, layers, hidden d, ffn_hidden I, patch p, image,
    merge m; transformers siglip / clip / qwen2_5_vl / llama4 / pixtral / internvl / qwen3_vl modeling files)."""
    v = m.get("vision") or {}
    L = v.get("layers", 0)
    if not L:
        return 0
    kind, d, I, p = v.get("kind", "siglip"), v["hidden"], v["ffn_hidden"], v["patch_size"]
    n = (v["image_size"] // p) ** 2
    merge = v.get("merge") or {"siglip": 4, "clip": 1}.get(kind, 2)
    k = merge * merge * d            # merged width
    T = m["hidden"]
    ln_gelu = 4 * d * d + 2 * d * I + I + 9 * d
    if kind == "siglip":
        return 3 * p * p * d + d + n * d + L * ln_gelu + 2 * d + d * T + d
    if kind == "clip":
        return d + 3 * p * p * d + (n + 1) * d + 4 * d + L * ln_gelu + d * T + T + T * T + T
    if kind == "qwen2_5_vl":
        return 3 * 2 * p * p * d + L * (4 * d * d + 3 * d * I + 2 * I + 7 * d) + d + k * k + k + k * T + T
    if kind == "llama4":
        P = v.get("projector_hidden") or 4096
        return 3 * p * p * d + d + (n + 1) * d + 4 * d + L * ln_gelu + k * P + P * P + P * T
    if kind == "qwen3_vl":  # the patch merger (LayerNorm d) and each deepstack merger (LayerNorm m^2 d)
        P = v.get("positions") or n
        merger = k * (k + 1) + k * T + T
        return (3 * 2 * p * p * d + d + P * d + L * ln_gelu) + 2 * d + merger + v.get("deepstack", 0) * (2 * k + merger)
    if kind == "pixtral":
        return 3 * p * p * d + d + L * (4 * d * d + 3 * d * I + 2 * d) + d + k * d + d * T + T * T
    return 3 * p * p * d + 2 * d + (n + 1) * d + L * (ln_gelu + 2 * d) + 2 * k + k * T + T + T * T + T


def per_layer(m, key, L):
    """A layer_types / mlp_types list (or its "3*a,b" form) repeated over L layers; None when absent."""
    v = m.get(key)
    if v is None:
        return None
    if isinstance(v, str):
        items = []
        for part in v.split(","):
            n, _, name = part.strip().rpartition("*")
            items += [name.strip()] * (int(n) if n else 1)
        v = items
    return [v[i % len(v)] for i in range(L)]


def dense_mlp_params(m, f):
    h = m["hidden"]
    gated = m.get("mlp", "gated") == "gated"
    p = (3 if gated else 2) * h * f
    if m.get("bias"):
        p += (2 * f + h) if gated else (f + h)
    return p


def expert_params(m, f):
    return dense_mlp_params(m, f)


def moe_layer_ids(m):
    moe = m.get("moe")
    L = m["layers"]
    if not moe:
        return set()
    k = moe.get("dense_layers", 0) or 0
    freq = moe.get("layer_freq", 1) or 1
    return {i for i in range(k, L) if (i - k) % freq == 0}


def count(m):
    h = m["hidden"]
    V = m["vocab"]
    nw = norm_width(m)
    L = m["layers"]
    moe = m.get("moe")
    moe_ids = moe_layer_ids(m)
    enc = m.get("encoder_layers", 0) or 0   # T5: encoder layers, then decoder layers with cross-attention
    mixers = ["encoder"] * enc + (per_layer(m, "layer_types", L) or ["full"] * L)
    mlps = ["dense"] * enc + (per_layer(m, "mlp_types", L) or ["moe" if i in moe_ids else "dense"
                                                               for i in range(L)])
    L += enc
    norms = m.get("norms_per_layer", 2) * nw * h
    mixer_params = {"full": attention_params(m), "sliding": attention_params(m), "chunked": attention_params(m),
                    "encoder": attention_params(m), "none": 0}
    total = 0
    inactive = 0
    for i in range(L):
        if mixers[i] not in mixer_params:
            mixer_params[mixers[i]] = linear_params(m) if mixers[i] == "linear" else ssm_params(m)
        cross = enc > 0 and mixers[i] != "encoder"   # a decoder layer's cross-attention and its norm
        halves = (mixers[i] != "none") + (mlps[i] != "none") + cross
        total += mixer_params[mixers[i]] + norms * halves // 2 + (attention_params(m) if cross else 0)
        if mlps[i] == "none":
            continue
        if mlps[i] == "moe":
            E, k = moe["experts"], moe["top_k"]
            fe = moe["expert_ffn_hidden"]
            one = expert_params(m, fe)
            total += E * one + h * E
            if moe.get("router_bias"):
                total += E
            s = moe.get("shared_experts", 0) or 0
            if s:
                total += s * dense_mlp_params(m, moe["shared_expert_ffn_hidden"])
                if moe.get("shared_expert_gate"):
                    total += h
            inactive += (E - k) * one
        else:
            total += dense_mlp_params(m, m["ffn_hidden"])
    total += vision_params(m)
    # relative position bias per stack (T5), and the encoder's final norm
    total += (m.get("relative_attention_buckets", 0) or 0) * m["heads"] * (2 if enc else 1)
    if enc and m.get("final_norm", True):
        total += nw * h
    # embeddings
    total += V * h
    if m.get("position", "rope") == "learned":
        total += m["max_positions"] * h
    total += m.get("type_vocab", 0) * h
    if m.get("embedding_norm"):
        total += nw * h
    if m.get("final_norm", True):
        total += nw * h
    head = m.get("head", "lm")
    if head == "lm":
        if not m.get("tied_embeddings", False):
            total += V * h
        if m.get("lm_head_bias"):
            total += V
    elif head == "classification":
        n = m.get("num_labels", 2)
        total += h * h + h + n * h + n
    elif head != "none":
        raise ValueError("head must be lm, classification or none")
    return total, total - inactive


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "models.json")
    with open(path) as f:
        models = json.load(f)
    bad = 0
    print("%-24s %18s %18s %14s %18s %18s" % ("id", "computed", "published", "diff",
                                               "active(comp)", "active(pub)"))
    for e in models:
        tot, act = count(e["model"])
        pub = e.get("params_total")
        src = e.get("params_total_source", "published")
        diff = None if pub is None else tot - pub
        flag = ""
        if diff:
            if src == "computed":
                flag = "  computed entry disagrees with check"
            else:
                flag = "  MISMATCH"
            bad += 1
        pa = e.get("params_active")
        print("%-24s %18d %18s %14s %18s %18s%s" % (
            e["id"], tot, "-" if pub is None else "%d" % pub,
            "-" if diff is None else "%d" % diff,
            "%d" % act if e["model"].get("moe") else "-",
            "-" if pa is None else "%d" % pa, flag))
    print("%d models, %d mismatches" % (len(models), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
