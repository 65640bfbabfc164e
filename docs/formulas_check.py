#!/usr/bin/env python3
"""Reference implementation of the formulas in memory-model.md; produces the worked examples.
Pure python, no dependencies. Every number quoted in memory-model.md Section 12 comes from here."""
import math
from types import SimpleNamespace as NS
MiB = 1024**2; GiB = 1024**3

# ---------------- Megatron-LM HEAD (d98e8a64) theoretical_memory_usage.py ----------------
def mlm_weight_opt(a, verbose=False):
    qps = a.kv_channels * a.num_attention_heads
    ratio = qps / a.hidden_size
    g = a.num_query_groups if a.group_query_attention else a.num_attention_heads
    E = 1 if a.num_experts is None else a.num_experts
    glu = 1.5 if a.swiglu else 1.0
    shared = 0 if a.moe_shared_expert_intermediate_size is None else a.moe_shared_expert_intermediate_size
    if a.num_experts is not None:
        if isinstance(a.moe_layer_freq, int):
            pat = [1 if i % a.moe_layer_freq == 0 else 0 for i in range(a.num_layers)]
        else:
            pat = list(a.moe_layer_freq)
        n_moe = sum(pat); n_dense = a.num_layers - n_moe; Fm = a.moe_ffn_hidden_size
    else:
        pat = [0]*a.num_layers; n_moe = 0; n_dense = a.num_layers; Fm = 0
    if a.mtp_num_layers is not None:
        mtp_moe = pat[-1]*a.mtp_num_layers; mtp_dense = (1-pat[-1])*a.mtp_num_layers
    else:
        mtp_moe = mtp_dense = 0
    norm = 1 if a.normalization == "RMSNorm" else 2
    h = a.hidden_size
    if getattr(a, 'multi_latent_attention', False):
        if a.q_lora_rank is None:
            q = h*a.num_attention_heads*(a.qk_head_dim+a.qk_pos_emb_head_dim)
        else:
            q = a.q_lora_rank*(h + a.num_attention_heads*(a.qk_head_dim+a.qk_pos_emb_head_dim) + norm)
        attn = q + a.kv_lora_rank*(h + a.num_attention_heads*(a.qk_head_dim+a.v_head_dim)+norm) \
               + h*a.qk_pos_emb_head_dim + a.num_attention_heads*a.v_head_dim*h
    else:
        attn = 2*h*h*((1 + g/a.num_attention_heads)*ratio)
    emb = h*a.padded_vocab_size
    final_ln = norm*h
    emb_layers = 2*emb if a.untie_embeddings_and_output_weights else emb
    dense_mlp = 2*h*a.ffn_hidden_size*glu
    shared_p = 2*h*shared*glu
    lat = a.moe_latent_size if getattr(a,'moe_latent_size',None) is not None else h
    routed = 2*lat*Fm*E*glu
    active_routed = 2*lat*Fm*a.moe_router_topk*glu if a.num_experts is not None else 0
    latproj = 2*h*a.moe_latent_size if (a.num_experts is not None and getattr(a,'moe_latent_size',None) is not None) else 0
    ln = 2*h*norm
    router = (h*E + (E if a.add_bias_linear else 0)) if a.num_experts is not None else 0
    sgate = h if (shared > 0 and getattr(a,'moe_shared_expert_gate',False)) else 0
    L_dense = attn + dense_mlp + ln
    L_moe = attn + shared_p + routed + latproj + ln + router + sgate
    L_moe_act = attn + shared_p + active_routed + latproj + ln + router + sgate
    block = L_dense*n_dense + L_moe*n_moe + final_ln
    block_act = L_dense*n_dense + L_moe_act*n_moe + final_ln
    mtp = L_dense*mtp_dense + L_moe*mtp_moe
    total = block + mtp + emb_layers; active = block_act + mtp + emb_layers
    etp, ep, pp, tp = a.expert_tensor_parallel_size, a.expert_model_parallel_size, a.pipeline_model_parallel_size, a.tensor_model_parallel_size
    edp = a.world_size // (etp*ep*pp)
    tp_sh = (attn+dense_mlp)*n_dense + (attn+shared_p)*n_moe
    rep = ln*n_dense + (ln+latproj+router+sgate)*n_moe + final_ln
    exp_sh = routed*n_moe
    tp_sh_mtp = (attn+dense_mlp)*mtp_dense + (attn+shared_p)*mtp_moe
    rep_mtp = ln*mtp_dense + (ln+latproj+router+sgate)*mtp_moe
    exp_mtp = routed*mtp_moe
    tp_most = (tp_sh/pp + tp_sh_mtp + emb)/tp
    rep_most = rep/pp + rep_mtp
    exp_most = (exp_sh/pp + exp_mtp)/(etp*ep)
    n_most = tp_most + rep_most + exp_most
    if a.untie_embeddings_and_output_weights and pp == 1:
        tp_most += emb/tp; n_most += emb/tp
    bpp = lambda d: 18 if not a.use_distributed_optimizer else 6 + 12/d
    mem = (tp_most + rep_most)*bpp(a.data_parallel_size) + exp_most*bpp(edp)
    return dict(total=total, active=active, most_loaded=n_most, tp_most=tp_most, rep_most=rep_most,
                exp_most=exp_most, edp=edp, bytes=mem)

def mlm_act_sp(a, m):
    s,b,h,L,p,t,V = a.seq_length,a.micro_batch_size,a.hidden_size,a.num_layers,a.pipeline_model_parallel_size,a.tensor_model_parallel_size,a.padded_vocab_size
    act = s*b*h*(18 + 4*(a.ffn_hidden_size/h)) * L
    act += 8*s*b*p
    act += s*b*h*p
    vp = a.virtual_pipeline_model_parallel_size
    inflight = p
    if vp is not None:
        pen = 1 + (p-1)/(p*vp); inflight = math.ceil(pen*p); act *= pen
    if vp is None and p > 1 and m is not None:
        act *= min(1, m/p); inflight = min(m, p)
    if p == 1:
        act += s*b*h*4*(1 + V/h)
    return act/t, inflight

def mlm_act_nosp(a, m):
    s,b,h,L,p,t,V = a.seq_length,a.micro_batch_size,a.hidden_size,a.num_layers,a.pipeline_model_parallel_size,a.tensor_model_parallel_size,a.padded_vocab_size
    act = s*b*h*(10 + 24/t) * L
    act += 8*s*b*p + s*b*h*p
    vp = a.virtual_pipeline_model_parallel_size
    if vp is not None:
        act *= 1 + (p-1)/(p*vp)
    if vp is None and p > 1 and m is not None:
        act *= min(1, m/p)
    if p == 1:
        act += (s*b*V/t + s*b*h)*2
    return act*1.05

def mlm_args(**kw):
    d = dict(kv_channels=None, num_attention_heads=None, hidden_size=None, group_query_attention=False, num_query_groups=None,
             num_experts=None, swiglu=False, moe_shared_expert_intermediate_size=None, moe_layer_freq=1, moe_ffn_hidden_size=None,
             mtp_num_layers=None, normalization="LayerNorm", multi_latent_attention=False, padded_vocab_size=None,
             untie_embeddings_and_output_weights=False, ffn_hidden_size=None, moe_latent_size=None, moe_router_topk=1,
             add_bias_linear=False, moe_shared_expert_gate=False, expert_tensor_parallel_size=1, expert_model_parallel_size=1,
             pipeline_model_parallel_size=1, tensor_model_parallel_size=1, world_size=1, data_parallel_size=1,
             use_distributed_optimizer=False, seq_length=None, micro_batch_size=1, virtual_pipeline_model_parallel_size=None,
             num_layers=None)
    d.update(kw)
    if d['kv_channels'] is None: d['kv_channels'] = d['hidden_size']//d['num_attention_heads']
    return NS(**d)

# ---------------- Megatron-Bridge HEAD (067f987d) theoretical_memory_utils.py ----------------
def br_pattern(mc):
    n = mc.num_layers
    if not (mc.num_moe_experts):
        pat = (False,)*n
    else:
        f = mc.moe_layer_freq
        pat = tuple(i % f == 0 for i in range(n)) if isinstance(f, int) else tuple(bool(x) for x in f)
    k = mc.mtp_num_layers or 0
    if k > 0: pat += (pat[-1],)*k
    return pat

def br_count(mc):
    h = mc.hidden_size; pat = br_pattern(mc)
    f = 3.0 if mc.swiglu else 2.0
    qr = mc.kv_channels*mc.num_attention_heads/h
    g = mc.num_query_groups if mc.num_query_groups else mc.num_attention_heads
    attn = 2*h*h*((1 + g/mc.num_attention_heads)*qr)
    ln = 4*h; fln = 2*h; dense = f*h*mc.ffn_hidden_size
    shared = f*h*(mc.moe_shared_expert_intermediate_size or 0)
    routed = 0.0; latp = 0.0
    if mc.num_moe_experts and any(pat):
        Fm = mc.moe_ffn_hidden_size if mc.moe_ffn_hidden_size is not None else mc.ffn_hidden_size
        if mc.moe_latent_size is None: routed = f*h*Fm*mc.num_moe_experts
        else:
            routed = f*mc.moe_latent_size*Fm*mc.num_moe_experts; latp = 2*h*mc.moe_latent_size
    dbl = tuple(attn + ln + (shared + latp if m else dense) for m in pat)
    rbl = tuple(routed if m else 0.0 for m in pat)
    emb = h*mc.vocab_size*(1 if mc.share_embeddings_and_output_weights else 2)
    return NS(dense=sum(dbl)+fln, routed=sum(rbl), emb=emb, dbl=dbl, rbl=rbl, fln=fln, total=sum(dbl)+fln+sum(rbl)+emb)

def br_uneven(mc, pp):
    fs, ls = mc.num_layers_in_first_pipeline_stage, mc.num_layers_in_last_pipeline_stage
    if fs is None and ls is None: return None
    rem = mc.num_layers; left = pp
    if fs is not None: rem -= fs; left -= 1
    if ls is not None: rem -= ls; left -= 1
    mid = 0 if left == 0 else rem//left
    c = [mid]*pp
    if fs is not None: c[0] = fs
    if ls is not None: c[-1] = ls
    return c

def br_indices(mc, counts):
    vp = mc.virtual_pipeline_model_parallel_size
    if vp is None:
        out=[]; o=0
        for c in counts: out.append(list(range(o,o+c))); o+=c
        return out
    out=[[] for _ in counts]; o=0
    for _ in range(vp):
        for r,c in enumerate(counts):
            ch=c//vp; out[r]+=list(range(o,o+ch)); o+=ch
    return out

def br_estimate(cfg, m=None, include_act=True):
    mc = cfg.model; pc = br_count(mc)
    tp, pp, cp = mc.tensor_model_parallel_size, mc.pipeline_model_parallel_size, mc.context_parallel_size
    ep, etp = mc.expert_model_parallel_size, mc.expert_tensor_parallel_size
    h = mc.hidden_size; embsz = h*mc.vocab_size
    counts = br_uneven(mc, pp)
    if counts is None:
        dense_gpu = pc.dense/(pp*tp) + embsz/tp + (embsz/tp if (not mc.share_embeddings_and_output_weights and pp == 1) else 0)
        routed_gpu = pc.routed/(pp*ep*etp)
    else:
        idx = br_indices(mc, counts)
        ds = [sum(pc.dbl[i] for i in st) for st in idx]
        ds[-1] += sum(pc.dbl[mc.num_layers:]) + pc.fln
        ds[0] += embsz; ds[-1] += embsz
        dense_gpu = max(ds)/tp
        rs = [sum(pc.rbl[i] for i in st) for st in idx]; rs[-1] += sum(pc.rbl[mc.num_layers:])
        routed_gpu = max(rs)/(ep*etp)
    bpp = lambda n: 18.0 if not cfg.optimizer.use_distributed_optimizer else 6.0 + 12.0/max(1,n)
    dshard = cfg.data_parallel_size*cp
    eshard = max(1, (cfg.data_parallel_size*tp*cp)//max(1, ep*etp))
    dense_b = dense_gpu*bpp(dshard); routed_b = routed_gpu*bpp(eshard) if pc.routed > 0 else 0.0
    act = None
    if include_act:
        pat = br_pattern(mc); nm = sum(pat); tot = len(pat); nd = tot - nm
        moe_ffn = 0.0
        if mc.num_moe_experts and nm > 0:
            Fm = mc.moe_ffn_hidden_size if mc.moe_ffn_hidden_size is not None else mc.ffn_hidden_size
            moe_ffn = nm*(Fm*mc.moe_router_topk + (mc.moe_shared_expert_intermediate_size or 0))
        r = (nd*mc.ffn_hidden_size + moe_ffn)/(tot*h)
        s, b = mc.seq_length, cfg.train.micro_batch_size
        act = s*b*h*(18 + 4*r)*tot + 8*s*b*pp + s*b*h*pp
        vp = mc.virtual_pipeline_model_parallel_size
        if vp is not None: act *= 1 + (pp-1)/(pp*vp)
        if vp is None and pp > 1 and m is not None: act *= min(1, m/pp)
        if pp == 1: act += s*b*h*4*(1 + mc.vocab_size/h)
        act /= (tp*cp)
    return NS(pc=pc, dense_gpu=dense_gpu, routed_gpu=routed_gpu, dense_bpp=bpp(dshard), routed_bpp=bpp(eshard),
              dense_b=dense_b, routed_b=routed_b, wo=dense_b+routed_b, act=act)

def br_cfg(**ov):
    md = dict(num_layers=4, hidden_size=16, seq_length=8, ffn_hidden_size=64, num_attention_heads=4, num_query_groups=None,
              kv_channels=4, vocab_size=32, share_embeddings_and_output_weights=True, tensor_model_parallel_size=2,
              pipeline_model_parallel_size=2, num_layers_in_first_pipeline_stage=None, num_layers_in_last_pipeline_stage=None,
              virtual_pipeline_model_parallel_size=None, context_parallel_size=1, expert_model_parallel_size=1,
              expert_tensor_parallel_size=1, num_moe_experts=None, moe_layer_freq=1, moe_router_topk=1, moe_ffn_hidden_size=None,
              moe_shared_expert_intermediate_size=None, moe_latent_size=None, mtp_num_layers=None, swiglu=False)
    dp = ov.pop('data_parallel_size', 4)
    md.update(ov)
    return NS(model=NS(**md), train=NS(micro_batch_size=2), optimizer=NS(use_distributed_optimizer=True), data_parallel_size=dp)

# ---------------- DeepSpeed estimators (deepspeedai/DeepSpeed edaa7221) ----------------
def ds_zero2(P, gpn=1, nodes=1, cpu_offload=True, abf=1.5, legacy=False):
    G = nodes*gpn
    if cpu_offload:
        gpu = 2*P; cpu = P*max(4*G, 16)*abf
    else:
        gpu = (4*P + int(16*P/G)) if legacy else (2*P + int(18*P/G))
        cpu = P*4*gpn*abf
    return int(cpu), int(gpu)

def ds_zero3(P, LL, gpn=1, nodes=1, cpu_offload=True, cpu_offload_params=True, zero_init=True, abf=1.5):
    G = nodes*gpn; gf = 1/nodes; llm = 4*LL
    if cpu_offload:
        if cpu_offload_params:
            gpu = llm
            cpu = P*18*gf*abf if zero_init else P*max(4*gpn, 18*gf)*abf
        else:
            gpu = llm + int(2*P/G)
            cpu = P*16*gf*abf if zero_init else P*max(4*gpn, 16*gf)*abf
    else:
        gpu = llm + int(18*P/G)
        cpu = LL*4*gpn*abf if zero_init else P*4*gpn*abf
    return int(cpu), int(gpu), llm

# ---------------- ZeRO paper ----------------
def zero_paper(P, Nd, K=12):
    return dict(base=(2+2+K)*P, os=4*P + K*P/Nd, os_g=2*P + (2+K)*P/Nd, os_g_p=(2+2+K)*P/Nd)

# ---------------- HF-style dense decoder param count ----------------
def llama_params(h, L, a, kv, F, V, tied=False, norm_params_per=1):
    hd = h//a
    attn = h*h + 2*h*kv*hd + h*h
    mlp = 3*h*F
    norms = 2*h*norm_params_per
    per = attn + mlp + norms
    emb = V*h
    total = emb*(1 if tied else 2) + L*per + h*norm_params_per
    return dict(attn=attn, mlp=mlp, per_layer=per, emb=emb, total=total)

def lora_params(h, L, a, kv, F, r, targets=("q","k","v","o","gate","up","down")):
    hd = h//a
    dims = dict(q=(h,h), k=(h,kv*hd), v=(h,kv*hd), o=(h,h), gate=(h,F), up=(h,F), down=(F,h))
    per = sum(r*(dims[t][0]+dims[t][1]) for t in targets)
    return per*L, per

def nf4_bytes(numels, blocksize=64, dq=True, dq_block=256):
    q = sum(n/2 for n in numels)
    blocks = [math.ceil(n/blocksize) for n in numels]
    if dq:
        absmax = sum(blocks)*1 + sum(math.ceil(bk/dq_block) for bk in blocks)*4 + 4*len(numels)  # +fp32 offset per tensor
    else:
        absmax = sum(blocks)*4
    return q, absmax

def bnb8bit_adam_state_bytes(numels, min_8bit=4096, bs=256):
    tot = 0
    for n in numels:
        if n < min_8bit: tot += 8*n
        else: tot += 2*n + 2*4*math.ceil(n/bs)
    return tot

def fmt(x): return f"{x:,.0f}" if abs(x-round(x))<1e-6 else f"{x:,.4f}"

if __name__ == "__main__":
    out = []
    P = lambda *a: out.append(" ".join(str(x) for x in a))
    # ---- Unit-test reproductions (Megatron-LM tests/unit_tests/training/test_weight_and_optimizer_memory.py)
    base = dict(add_bias_linear=False, data_parallel_size=16, expert_model_parallel_size=2, expert_tensor_parallel_size=4,
                ffn_hidden_size=16, group_query_attention=False, hidden_size=8, kv_channels=4, moe_ffn_hidden_size=16,
                moe_latent_size=None, moe_layer_freq=[0,1], moe_router_topk=1, moe_shared_expert_gate=False,
                moe_shared_expert_intermediate_size=8, mtp_num_layers=None, multi_latent_attention=False, normalization="RMSNorm",
                num_attention_heads=2, num_experts=4, num_layers=2, padded_vocab_size=32, pipeline_model_parallel_size=1,
                swiglu=False, tensor_model_parallel_size=2, untie_embeddings_and_output_weights=False, use_distributed_optimizer=True,
                world_size=32)
    a = mlm_args(**{**base, 'pipeline_model_parallel_size':2, 'world_size':64})
    exp = ((256+256+256+128)/2+256)/2*(6+12/16) + (16+16+32+8)/2*(6+12/16) + 1024/2/(4*2)*(6+12/4)
    r = mlm_weight_opt(a); P("MLM-UT1", r['bytes'], "expected", exp, math.isclose(r['bytes'],exp))
    a = mlm_args(**{**base, 'moe_latent_size':4})
    exp = (((256+256)+(256+128)+256)/2 + 16+(16+64+32)+8)*(6+12/16) + 512/(4*2)*(6+12/4)
    r = mlm_weight_opt(a); P("MLM-UT2", r['bytes'], "expected", exp, math.isclose(r['bytes'],exp))
    # ---- Bridge unit tests
    e = br_estimate(br_cfg(), include_act=False)
    P("BR-UT dense", e.pc.dense+e.pc.emb, e.dense_gpu, e.dense_bpp, e.wo, "(exp 13088 3400 9 30600)")
    e = br_estimate(br_cfg(num_layers=8, tensor_model_parallel_size=1, pipeline_model_parallel_size=4,
        num_layers_in_first_pipeline_stage=1, num_layers_in_last_pipeline_stage=3, share_embeddings_and_output_weights=False), include_act=False)
    P("BR-UT uneven", e.dense_gpu, e.dense_b, "(exp 9952 89568)")
    e = br_estimate(br_cfg(num_layers=8, tensor_model_parallel_size=1, pipeline_model_parallel_size=4, num_layers_in_first_pipeline_stage=1,
        num_layers_in_last_pipeline_stage=3, share_embeddings_and_output_weights=False, num_moe_experts=2,
        moe_layer_freq=[0,1,0,0,1,0,1,1], moe_ffn_hidden_size=32), include_act=False)
    P("BR-UT moe uneven", e.dense_gpu, e.routed_gpu, "(exp 5856 4096)")
    e = br_estimate(br_cfg(pipeline_model_parallel_size=1, context_parallel_size=2, num_moe_experts=8, moe_layer_freq=2,
        moe_ffn_hidden_size=32, expert_model_parallel_size=4, data_parallel_size=8), include_act=False)
    P("BR-UT moe ep", e.pc.dense+e.pc.emb, e.dense_gpu, e.dense_bpp, e.dense_b, e.pc.routed, e.routed_gpu, e.routed_bpp, e.routed_b, e.wo,
      "(exp 8992 4496 6.75 30348 16384 4096 7.5 30720 61068)")
    e = br_estimate(br_cfg(pipeline_model_parallel_size=1, context_parallel_size=2), m=1)
    P("BR-UT act cp", e.act, "(exp 9568)")
    e = br_estimate(br_cfg(pipeline_model_parallel_size=1, num_moe_experts=4, moe_layer_freq=[0,1,0,1], moe_ffn_hidden_size=32,
        moe_shared_expert_intermediate_size=8, moe_latent_size=4, mtp_num_layers=1), include_act=False)
    P("BR-UT latent mtp", e.pc.dense+e.pc.emb, e.dense_gpu, e.pc.routed, e.routed_gpu, e.pc.total, "(exp 11232 5616 3072 3072 14304)")
    e = br_estimate(br_cfg(virtual_pipeline_model_parallel_size=2), m=4)
    P("BR-UT vpp", e.act, "(exp 22240)")

    # ---- E1 GPT-3 175B (Korthikanti Table 3: t=8 p=8 m(interleave)=3, 64 GPUs, GBS 64, mbs 1, s=2048, v=51200)
    g3 = mlm_args(hidden_size=12288, num_attention_heads=96, num_layers=96, ffn_hidden_size=4*12288, padded_vocab_size=51200,
                  seq_length=2048, micro_batch_size=1, tensor_model_parallel_size=8, pipeline_model_parallel_size=8,
                  world_size=64, data_parallel_size=1, use_distributed_optimizer=False, normalization="LayerNorm")
    r = mlm_weight_opt(g3)
    P("E1 total params", r['total'], "most-loaded", r['most_loaded'], "W+O bytes", r['bytes'], "MiB", r['bytes']/MiB, "GiB", r['bytes']/GiB)
    act_novp, inf1 = mlm_act_sp(g3, 64)
    g3v = mlm_args(**{**vars(g3), 'virtual_pipeline_model_parallel_size':3})
    act_vp, inf2 = mlm_act_sp(g3v, 64)
    P("E1 act SP+sel no-VPP", act_novp, "MiB", act_novp/MiB, "GiB", act_novp/GiB, "inflight", inf1)
    P("E1 act SP+sel VPP3", act_vp, "MiB", act_vp/MiB, "GiB", act_vp/GiB, "inflight", inf2, "penalty", 1+7/24)
    P("E1 total VPP3 GiB", (r['bytes']+act_vp)/GiB, "no-VPP GiB", (r['bytes']+act_novp)/GiB)
    P("E1 act m=4 (<p) no-VPP", mlm_act_sp(g3, 4)[0], "inflight", mlm_act_sp(g3,4)[1])
    # E2 Table 2 per layer
    s,b,h,aa,t = 2048,1,12288,96,8
    sbh = s*b*h; asr = aa*s/h
    rows = dict(none=sbh*(34+5*asr), tp=sbh*(10+24/t+5*asr/t), tp_sp=sbh*(34/t+5*asr/t), tp_sel=sbh*(10+24/t), tp_sp_sel=sbh*34/t, full=sbh*2)
    for k,v in rows.items(): P("E2", k, v, "MiB", v/MiB)
    P("E2 5as/h", 5*asr)

    # ---- E3 Llama-2-7B
    l2 = llama_params(4096, 32, 32, 32, 11008, 32000)
    P("E3 llama2-7b", l2)
    Pl2 = l2['total']; LL = 32000*4096
    for co, cop, zi in [(True,True,True),(True,True,False),(True,False,True),(True,False,False),(False,False,True),(False,False,False)]:
        cpu, gpu, llm = ds_zero3(Pl2, LL, gpn=8, nodes=1, cpu_offload=co, cpu_offload_params=cop, zero_init=zi)
        P("E3 ds_zero3 off_opt=%s off_param=%s zinit=%s"%(co,cop,zi), "cpu", cpu, f"{cpu/GiB:.2f}GiB", "gpu", gpu, f"{gpu/GiB:.2f}GiB")
    zp = zero_paper(Pl2, 8); P("E3 zero paper Nd=8", {k: (v, v/1e9) for k,v in zp.items()})
    for st in (True, False):
        cpu, gpu = ds_zero2(Pl2, gpn=8, cpu_offload=st); P("E3 ds_zero2 offload=%s"%st, cpu, gpu, f"{gpu/GiB:.3f}GiB")
    # FSDP2 FULL_SHARD, bf16 param_dtype, fp32 reduce, fp32 AdamW, 8 GPUs
    N=8; Pl = l2['per_layer']; root = 2*l2['emb'] + 4096
    sharded = 16*Pl2/N
    P("E3 FSDP2 sharded fp32 param+grad+adam", sharded, sharded/GiB)
    P("E3 FSDP2 per-layer group", Pl, "unsharded bf16 bytes", 2*Pl, "root group params", root, "root bf16", 2*root)
    fwd_peak_extra = 2*root + 2*Pl + 2*Pl*2  # root kept + current unsharded + next AG output+copy-out
    bwd_peak_extra = 2*root + 2*(2*Pl) + 2*Pl + 4*Pl  # root, current+prefetched unsharded bf16, unsharded bf16 grads, fp32 RS input
    P("E3 FSDP2 transient fwd", fwd_peak_extra, fwd_peak_extra/GiB, "bwd", bwd_peak_extra, bwd_peak_extra/GiB)

    # ---- E4 DeepSpeed docs reproduction (t5-3b, 2851e6, 8 GPUs, 1 node; largest 32e6)
    for st in (True, False):
        cpu, gpu = ds_zero2(2851e6, gpn=8, cpu_offload=st); cpuL, gpuL = ds_zero2(2851e6, gpn=8, cpu_offload=st, legacy=True)
        P("E4 zero2 offload=%s"%st, f"cpu {cpu/GiB:.2f} gpu(new) {gpu/GiB:.2f} gpu(legacy) {gpuL/GiB:.2f}", cpu, gpu, gpuL)
    for co, cop, zi in [(True,True,True),(True,True,False),(True,False,True),(True,False,False),(False,False,True),(False,False,False)]:
        cpu, gpu, _ = ds_zero3(2851e6, 32e6, gpn=8, cpu_offload=co, cpu_offload_params=cop, zero_init=zi)
        P("E4 zero3", co, cop, zi, f"{cpu/GiB:.2f}GiB | {gpu/GiB:.2f}GiB", cpu, gpu)

    # ---- E5 ZeRO paper Table 1
    for PP_ in (7.5e9, 128e9, 1e12):
        for Nd in (1,4,16,64,256,1024):
            z = zero_paper(PP_, Nd)
            P("E5", PP_/1e9, Nd, round(z['os']/1e9,2), round(z['os_g']/1e9,2), round(z['os_g_p']/1e9,3))

    # ---- E6/E7 Llama-3-8B LoRA / QLoRA
    l3 = llama_params(4096, 32, 32, 8, 14336, 128256)
    P("E6 llama3-8b", l3)
    nl, per = lora_params(4096, 32, 32, 8, 14336, 16)
    P("E6 LoRA r16 all-linear trainable", nl, "per layer", per)
    base_bf16 = 2*l3['total']
    P("E6 bf16 base bytes", base_bf16, base_bf16/GiB)
    P("E6 adapter fp32 w+g+adam (16B)", 16*nl, 16*nl/GiB, "adapter bf16 w+g, fp32 master+adam (2+2+12)", 16*nl)
    P("E6 LoRA static total (bf16 base + fp32 adapters + Adam)", base_bf16 + 16*nl, (base_bf16+16*nl)/GiB)
    numels = []
    hd = 128
    for _ in range(32):
        numels += [4096*4096, 4096*1024, 4096*1024, 4096*4096, 4096*14336, 4096*14336, 14336*4096]
    q, am = nf4_bytes(numels, dq=True); q2, am2 = nf4_bytes(numels, dq=False)
    nonq = 2*(2*128256*4096 + 32*2*4096 + 4096)
    P("E7 quantized numel", sum(numels), "nf4 packed", q, "absmax DQ", am, "absmax noDQ", am2)
    P("E7 bits/param DQ", 8*(q+am)/sum(numels), "noDQ", 8*(q2+am2)/sum(numels))
    P("E7 non-quantized bf16 (emb, lm_head, norms)", nonq)
    P("E7 QLoRA base total DQ", q+am+nonq, (q+am+nonq)/GiB, "noDQ", q2+am2+nonq, (q2+am2+nonq)/GiB)
    P("E7 QLoRA base+adapters(16B)", q+am+nonq+16*nl, (q+am+nonq+16*nl)/GiB)

    # ---- E8 Mixtral 8x7B Megatron count and shard
    mx = mlm_args(hidden_size=4096, num_attention_heads=32, group_query_attention=True, num_query_groups=8, num_layers=32,
                  ffn_hidden_size=14336, num_experts=8, moe_ffn_hidden_size=14336, moe_router_topk=2, swiglu=True,
                  normalization="RMSNorm", padded_vocab_size=32000, untie_embeddings_and_output_weights=True,
                  tensor_model_parallel_size=2, pipeline_model_parallel_size=4, expert_model_parallel_size=8,
                  expert_tensor_parallel_size=1, world_size=64, data_parallel_size=8, use_distributed_optimizer=True)
    r = mlm_weight_opt(mx)
    P("E8 mixtral", {k:(v if not isinstance(v,float) else round(v,4)) for k,v in r.items()}, "GiB", r['bytes']/GiB)
    mx2 = mlm_args(**{**vars(mx), 'use_distributed_optimizer': False}); r2 = mlm_weight_opt(mx2)
    P("E8 mixtral no distopt bytes", r2['bytes'], r2['bytes']/GiB)

    # ---- E9 without-SP path, Llama-2-7B-ish (Megatron formula, ffn ignored), TP=2, PP=1, s=4096, b=1, V=32000
    l2a = mlm_args(hidden_size=4096, num_attention_heads=32, num_layers=32, ffn_hidden_size=11008, padded_vocab_size=32000,
                   seq_length=4096, micro_batch_size=1, tensor_model_parallel_size=2, pipeline_model_parallel_size=1)
    v = mlm_act_nosp(l2a, 1); P("E9 noSP act", v, v/MiB, v/GiB)
    v2, _ = mlm_act_sp(l2a, 1); P("E9 SP+sel act same cfg (ffn=11008)", v2, v2/MiB, v2/GiB)

    # ---- E10 logits / CE for Llama-3-8B b=1 s=8192 V=128256
    bs_, V_, H_ = 1*8192, 128256, 4096
    P("E10 bf16 logits", 2*bs_*V_, "fp32 upcast", 4*bs_*V_, "log_softmax out", 4*bs_*V_, "fwd peak naive", 10*bs_*V_, (10*bs_*V_)/GiB)
    P("E10 Megatron 4sbh(1+v/h)", 4*bs_*H_*(1+V_/H_), (4*bs_*H_*(1+V_/H_))/GiB)
    inc = math.ceil(V_/H_); chunk = 2**math.ceil(math.log2(math.ceil(bs_/inc)))
    P("E10 Liger inc_factor", inc, "chunk", chunk, "num_chunks", math.ceil(bs_/chunk), "chunk logits bf16", 2*chunk*V_, (2*chunk*V_)/MiB,
      "grad_input bf16", 2*bs_*H_, "grad_weight bf16", 2*V_*H_, "fp32 (autocast)", 4*V_*H_, (4*V_*H_)/MiB,
      "mm + .float()", 6*V_*H_)
    # ---- E11 attention scores: eager vs flash, Llama-3-8B a=32 s=8192 b=1
    a_, s_ = 32, 8192
    P("E11 eager 5as^2b", 5*a_*s_*s_, (5*a_*s_*s_)/GiB, "no-dropout 2as^2b", 2*a_*s_*s_, (2*a_*s_*s_)/GiB, "flash lse 4abs", 4*a_*s_, (4*a_*s_)/MiB)
    # ---- E12 8-bit Adam for Llama-2-7B
    n7 = [32000*4096, 32000*4096, 4096]
    for _ in range(32): n7 += [4096*4096]*4 + [4096*11008]*3 + [4096, 4096]
    assert sum(n7) == Pl2
    b8 = bnb8bit_adam_state_bytes(n7); P("E12 8bit adam states", b8, b8/GiB, "bytes/param", b8/Pl2, "fp32 adam", 8*Pl2, 8*Pl2/GiB)
    # Adafactor (torch) states for 2D: rows+cols, 1D: full; fp32
    af = 0
    for n in n7: pass
    mats = [(32000,4096),(32000,4096)] + [(4096,4096)]*4*32 + [(11008,4096),(11008,4096),(4096,11008)]*32
    vecs = [4096] + [4096,4096]*32
    af = 4*(sum(r_+c_ for r_,c_ in mats) + sum(vecs))
    P("E12 adafactor fp32 states", af, af/MiB)
    mu = 4*sum(r_*c_ for r_,c_ in mats[2:]) + 8*(2*32000*4096 + sum(vecs))
    P("E12 muon(fp32 momentum on hidden 2D) + adamw(emb/head/norms)", mu, mu/GiB)
    # ---- E13 cublas / allocator
    P("E13 cublas default", 4096*1024*2 + 16*1024*8, "hopper", 4096*8*1024)
    def round_alloc(sz):
        sz = 512 if sz < 512 else 512*((sz+511)//512)
        return sz
    def seg(sz):
        if sz <= 1048576: return 2097152
        if sz < 10485760: return 20971520
        return ((sz + 2097151)//2097152)*2097152
    for x in (1000, 1048577, 5_000_000, 100_000_001):
        P("E13 alloc", x, round_alloc(x), seg(round_alloc(x)))
    # ---- E14 Llama-3-70B interleaved
    l70 = mlm_args(hidden_size=8192, num_attention_heads=64, group_query_attention=True, num_query_groups=8, num_layers=80,
                   ffn_hidden_size=28672, swiglu=True, normalization="RMSNorm", padded_vocab_size=128256,
                   untie_embeddings_and_output_weights=True, seq_length=8192, micro_batch_size=1, tensor_model_parallel_size=8,
                   pipeline_model_parallel_size=4, virtual_pipeline_model_parallel_size=5, world_size=128, data_parallel_size=4,
                   use_distributed_optimizer=True)
    r = mlm_weight_opt(l70); act, inf = mlm_act_sp(l70, 32)
    P("E14 l3-70b total", r['total'], "most", r['most_loaded'], "W+O", r['bytes'], r['bytes']/GiB, "act", act, act/GiB, "inflight", inf,
      "sum GiB", (r['bytes']+act)/GiB)
    print("\n".join(out))

def derived_layer_act(s, b, h, a, g, F, swiglu=True, fused_swiglu=False, flash=True, dropout=False, tp=1, sp=False, bytes_act=2):
    """[DERIVED] per-layer activation bytes, Korthikanti-style accounting generalised to GQA/SwiGLU/no-dropout/FlashAttention.
    Returns (total_bytes, breakdown). TP divides tensors inside the TP region; SP divides the rest."""
    sbh = s*b*h; r = g/a
    tp_region = 0.0; outside = 0.0
    outside += 2*sbh              # input_layernorm input
    outside += 2*sbh              # QKV projection input (norm output)  [SP: stored sharded, all-gathered in bwd]
    tp_region += 2*sbh + 2*2*sbh*r  # Q, K, V (post-RoPE) saved by attention kernel
    tp_region += 2*sbh            # attention output O = o_proj input
    if flash:
        tp_region += 4*b*a*s      # softmax LSE fp32
    else:
        tp_region += 2*a*s*s*b    # softmax output
        if dropout: tp_region += 3*a*s*s*b   # dropout mask + dropout output
    if dropout: outside += sbh    # attention-output dropout mask
    outside += 2*sbh              # post_attention_layernorm input
    outside += 2*sbh              # MLP input (norm output)
    if swiglu:
        tp_region += (6 if fused_swiglu else 8)*s*b*F
    else:
        tp_region += 4*s*b*F      # GeLU input + fc2 input
    if dropout: outside += sbh    # MLP dropout mask
    total = tp_region/tp + (outside/tp if sp else outside)
    return total

if __name__ == "__main__":
    out2 = []
    Q = lambda *x: out2.append(" ".join(str(y) for y in x))
    # sanity: reproduces Korthikanti 34 + 5as/h for GPT (MHA, GeLU F=4h, dropout, no flash)
    s,b,h,a = 2048,1,12288,96
    v = derived_layer_act(s,b,h,a,a,4*h, swiglu=False, flash=False, dropout=True)
    Q("D0 korthikanti check", v, s*b*h*(34+5*a*s/h), v == s*b*h*(34+5*a*s/h))
    v = derived_layer_act(s,b,h,a,a,4*h, swiglu=False, flash=False, dropout=True, tp=8)
    Q("D0 tp check", v, s*b*h*(10+24/8+5*a*s/h/8))
    v = derived_layer_act(s,b,h,a,a,4*h, swiglu=False, flash=False, dropout=True, tp=8, sp=True)
    Q("D0 tp+sp check", v, s*b*h*(34/8+5*a*s/h/8))
    # E15 Llama-3-8B LoRA activations s=2048 b=1
    s,b,h,a,g,F,L,V = 2048,1,4096,32,8,14336,32,128256
    per = derived_layer_act(s,b,h,a,g,F)
    per_f = derived_layer_act(s,b,h,a,g,F, fused_swiglu=True)
    Q("E15 per-layer unfused", per, per/MiB, "coef", (per-4*b*a*s)/(s*b*h), "fused", per_f, per_f/MiB)
    Q("E15 L layers", L*per, L*per/GiB)
    lora_drop = 3*s*b*(6*h + F)
    Q("E15 LoRA dropout>0 extra per layer", lora_drop, lora_drop/MiB, "coef", lora_drop/(s*b*h), "lora_A outs", 7*2*s*b*16)
    Q("E15 naive CE peak 10bsV", 10*b*s*V, 10*b*s*V/GiB)
    Q("E15 full-recompute stored inputs", 2*s*b*h*L, (2*s*b*h*L)/MiB, "+1 layer", (2*s*b*h*L+per)/GiB)
    Q("E15 total no-ckpt (acts + CE fwd peak) GiB", (L*per + 10*b*s*V)/GiB)
    Q("E15 QLoRA dequant transient largest W bf16", 2*4096*14336, 2*4096*14336/MiB)
    # FSDP2 refined: a middle group's working set (the gathered root, the output's gradient, the group and
    # its prefetched neighbour, down_proj's gradient, the fp32 reduce-scatter input the group above left held)
    Pl = 202383360; R = 2*131072000 + 4096; H = 131072000; D = 4096*11008
    bwd = 2*R + 2*H + 2*(2*Pl) + 2*D + 4*Pl
    Q("E3b FSDP2 bwd transient, a group's working set", bwd, bwd/GiB)
    print("\n".join(out2))
