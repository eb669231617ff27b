"""Shapes from a real model: the linear and matmul calls of one transformer
forward pass, read from a Hugging Face style config (``sweep from-config``).

Per decoder layer: the q/k/v/o projections, the MLP gate/up/down projections
(``torch.nn.Linear``: ``(tokens, in, out)``; op ``linear`` where the config's
``attention_bias`` or ``mlp_bias`` is true, else ``linear_nobias``, as a
LLaMA's, whose config says false or nothing; a Qwen2's q/k/v carry one its
config does not name), and the attention's score
matmul ``(q_len, head_dim, kv_len)`` and value matmul ``(q_len, kv_len,
head_dim)`` of every head, run as PyTorch runs them: one batched kernel a
layer over every sequence's heads (the call site's ``batch``: heads a kernel);
once per pass the ``lm_head`` on every position (the Hugging Face default;
no bias).
For each ``--tokens`` value T: a prefill over T tokens (q_len = kv_len = T)
and one decode step with a KV cache of T tokens (q_len = 1, kv_len = T).
Identical calls are merged into one entry whose ``count`` is the total calls
(kernels) per pass and whose ``used_in`` lists every call site with its own
count (and ``batch``, when one call does several heads).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.op import dims_problem
from graphsval_core.files import schema
from graphsval_core.files.jsonfile import read_json
from graphsval_core.files.sweep import MAX_CALLS, MIXED, Sweep, SweepEntry

REQUIRED = (
    "hidden_size",
    "intermediate_size",
    "num_attention_heads",
    "vocab_size",
    "num_hidden_layers",
)


class ModelConfigError(UserInputError):
    pass


#: The optional keys read, each a positive integer when given (null: absent).
OPTIONAL = ("num_key_value_heads", "head_dim")
#: The optional keys that say which projections carry a bias (true or false;
#: absent: false, as a LLaMA's or Mistral's config defaults them).
BIAS_KEYS = ("attention_bias", "mlp_bias")
#: Model types whose q/k/v projections carry a bias their config does not
#: name (Hugging Face's Qwen2 code builds them with bias=True, o_proj and the
#: MLP without).
QKV_BIAS_TYPES = ("qwen2", "qwen2_vl", "qwen2_5_vl")
#: The largest size a config may give (a hidden size or vocabulary of 2^31).
MAX_SIZE = 2**31
#: Keys that make a config a mixture of experts (Mixtral, Qwen-MoE,
#: DeepSeek, others): its MLP runs per expert on the tokens routed to it,
#: which these shapes (one dense MLP on every token) do not describe.
EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")


#: Keys that say a token is routed to experts, whatever their count is called.
ROUTING_KEYS = (
    "num_experts_per_tok",
    "num_experts_per_token",
    "experts_per_token",
    "moe_intermediate_size",
    "moe_topk",
    "moe_top_k",
    "num_selected_experts",
)
#: Other names a config may give a key this reads (another family's
#: spelling): refused, so that the key is not read as absent.
ALIASES = {
    "num_kv_heads": "num_key_value_heads",
    "n_kv_heads": "num_key_value_heads",
    "multi_query_group_num": "num_key_value_heads",
}


def _experts(config: dict[str, Any], prefix: str = "") -> tuple[str, str] | None:
    """``(key, value)`` of the first sign, at the top or in a nested object
    (DBRX's ``ffn_config.moe_num_experts``), that a config is a mixture of
    experts: a count of experts above 1 (:data:`EXPERT_KEYS`), or a count
    of experts a token is routed to, or their MLP's own size
    (:data:`ROUTING_KEYS`) above 0; None for a dense model's."""
    for key, value in config.items():
        if isinstance(value, str) and value.strip().isdigit():  # "8": a count written as text
            value = int(value)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if key in EXPERT_KEYS and number and value > 1:
            return f"{prefix}{key}", f"{value:g}"
        if key in ROUTING_KEYS and number and value > 0:
            return f"{prefix}{key}", f"{value:g}"
        if isinstance(value, dict):
            nested = _experts(value, f"{prefix}{key}.")
            if nested is not None:
                return nested
    return None


def read_config(path: str | Path) -> dict[str, Any]:
    """The config at ``path``: a JSON object whose sizes (``REQUIRED``, and
    ``OPTIONAL`` when given) are integers in [1, 2^31]; any other key (a
    Hugging Face config holds many) is not read. The heads must divide the
    hidden size when no ``head_dim`` is given, and the key/value heads the
    attention heads."""
    where = str(path)
    config = schema.obj(read_json(path, ModelConfigError), where, ModelConfigError)
    for key in REQUIRED:
        if key not in config:
            near = difflib.get_close_matches(key, [str(k) for k in config], n=1, cutoff=0.8)
            typo = f"; the file has {near[0]!r}: a misspelling?" if near else ""
            if not near and isinstance(config.get("text_config"), dict):  # a multimodal model's
                typo = "; the file nests its language model in 'text_config': give that object"
            raise ModelConfigError(f"{where}: missing key {key!r} (a positive integer{typo})")
        schema.integer(config[key], f"{where}: {key}", ModelConfigError, 1, MAX_SIZE)
    for key in OPTIONAL:
        if config.get(key) is not None:
            schema.integer(config[key], f"{where}: {key}", ModelConfigError, 1, MAX_SIZE)
            continue
        # a misspelt optional key was read as absent: num_key_value_head made a
        # grouped-query model's k/v projections as wide as its queries
        others = [str(k) for k in config if k not in (*REQUIRED, *OPTIONAL)]
        alias = [k for k in others if ALIASES.get(k) == key]
        if alias:
            raise ModelConfigError(
                f"{where}: {alias[0]!r} is not a key this reads: it reads {key!r} (another "
                "family's name for it; rename it)"
            )
        near = difflib.get_close_matches(key, others, n=1, cutoff=0.9)
        if near:
            raise ModelConfigError(
                f"{where}: {near[0]!r} is not a key this reads; a misspelling of {key!r}? "
                "(a positive integer, or null for none)"
            )
    for key in BIAS_KEYS:
        if config.get(key) is not None and not isinstance(config[key], bool):
            raise ModelConfigError(
                f"{where}: {key}: expected true or false (whether those projections carry "
                f"a bias), got {schema.kind(config[key])}"
            )
    found = _experts(config)
    if found is not None:
        at, experts = found
        raise ModelConfigError(
            f"{where}: {at} {experts}: a mixture-of-experts config (each token's MLP "
            "runs in the experts it is routed to), which from-config does not model: "
            "its shapes would be a dense model's; give a dense model's config"
        )
    heads = config["num_attention_heads"]
    if not config.get("head_dim") and config["hidden_size"] % heads:
        raise ModelConfigError(
            f"{where}: hidden_size {config['hidden_size']} is not a multiple of "
            f"num_attention_heads {heads} (give head_dim)"
        )
    kv_heads = config.get("num_key_value_heads") or heads
    if heads % kv_heads:
        raise ModelConfigError(
            f"{where}: num_attention_heads {heads} is not a multiple of num_key_value_heads "
            f"{kv_heads}"
        )
    return config


def model_calls(
    config: dict[str, Any], tokens: Sequence[int], batch: int
) -> list[tuple[str, str, tuple[int, ...], str, int, int]]:
    """``(op, phase, shape, site, count, heads)`` of every call of one pass per
    scenario: ``count`` calls a pass, each doing ``heads`` heads' products of
    ``shape`` in one kernel (1 for a projection; the attention's heads of
    every sequence, as PyTorch batches them, for its scores and values)."""
    h = config["hidden_size"]
    inter = config["intermediate_size"]
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads") or heads
    head_dim = config.get("head_dim") or h // heads
    vocab = config["vocab_size"]
    layers = config["num_hidden_layers"]
    # a projection with a bias is torch.nn.Linear's op with it, without one linear_nobias
    attention = "linear" if config.get("attention_bias") else "linear_nobias"
    qkv = attention
    if config.get("attention_bias") is None and config.get("model_type") in QKV_BIAS_TYPES:
        qkv = "linear"
    mlp = "linear" if config.get("mlp_bias") else "linear_nobias"
    calls = []
    for phase, q_len, kv_len in scenarios_of(tokens):
        rows = batch * q_len
        for op, site, shape in (
            (qkv, "q_proj", (rows, h, heads * head_dim)),
            (qkv, "k_proj", (rows, h, kv_heads * head_dim)),
            (qkv, "v_proj", (rows, h, kv_heads * head_dim)),
            (attention, "o_proj", (rows, heads * head_dim, h)),
            (mlp, "mlp.gate_proj", (rows, h, inter)),
            (mlp, "mlp.up_proj", (rows, h, inter)),
            (mlp, "mlp.down_proj", (rows, inter, h)),
        ):
            calls.append((op, phase, shape, site, layers, 1))
        # one batched kernel a layer over every sequence's heads, as PyTorch runs it
        heads_a_kernel = batch * heads
        calls.append(
            ("matmul", phase, (q_len, head_dim, kv_len), "attn.scores", layers, heads_a_kernel)
        )
        calls.append(
            ("matmul", phase, (q_len, kv_len, head_dim), "attn.values", layers, heads_a_kernel)
        )
        calls.append(("linear_nobias", phase, (rows, h, vocab), "lm_head", 1, 1))
    return calls


def scenarios_of(tokens: Sequence[int]) -> list[tuple[str, int, int]]:
    """The phases a sweep of ``tokens`` holds, each with the rows of a query
    and of the keys a sequence: ``prefill T=t`` (t and t), and for t above 1
    ``decode ctx=t`` (1 and t)."""
    out: list[tuple[str, int, int]] = []
    for t in tokens:
        out.append((f"prefill T={t}", t, t))
        if t > 1:
            out.append((f"decode ctx={t}", 1, t))
    return out


def sweep_from_config(path: str | Path, tokens: Sequence[int], batch: int, dtype: str) -> Sweep:
    """A mixed sweep of the model's calls, merged by (op, shape)."""
    config = read_config(path)
    model = config.get("_name_or_path") or config.get("model_type") or Path(path).stem
    merged: dict[tuple[str, tuple[int, ...]], dict[str, Any]] = {}
    for op, phase, shape, site, count, heads in model_calls(config, tokens, batch):
        problem = dims_problem(shape)
        if problem:
            raise ModelConfigError(
                f"{path}: {site} of {phase} (batch {batch}) has shape "
                f"{'x'.join(map(str, shape))}: {problem}; use fewer --tokens or a smaller --batch"
            )
        slot = merged.setdefault((op, shape), {"count": 0, "used_in": []})
        slot["count"] += count
        call = {"model": model, "phase": phase, "site": site, "count": count}
        if heads > 1:
            call["batch"] = heads
        slot["used_in"].append(call)
    for (op, shape), v in merged.items():
        if v["count"] > MAX_CALLS:
            raise ModelConfigError(
                f"{path}: {op} {'x'.join(map(str, shape))} is called {v['count']} times a pass, "
                f"more than {MAX_CALLS}"
            )
    entries = tuple(
        SweepEntry(shape, dtype, {}, {"count": v["count"], "used_in": v["used_in"]}, op)
        for (op, shape), v in merged.items()
    )
    meta = {
        "source": {
            "config": Path(path).name,
            "model": model,
            "tokens": list(tokens),
            "batch": batch,
        },
    }
    return Sweep(str(path), MIXED, None, entries, meta)
