#!/usr/bin/env bash
# Transformer benchmarks (issue 39): BERT-Base, MobileBERT-TINY and ViT-Base (sequence 128;
# ViT 197 tokens) and a LLaMA-3.2-1B decoder layer (prefill 512), native models written by
# scripts/gen_transformers.py, compiled for configs/16x16_int8_transformer.toml and
# 32x32_int8_transformer.toml (96 KB and 192 KB of SRAM, as Voyager's designs). Prints,
# for each model and array, the whole model's estimated cycles (the compiler's cycle
# model), ideal cycles (MACs / PEs) and MAC utilization beside Voyager's total (its
# Appendix A); then layer 0's layers, estimated, beside Voyager's rows for the same work.
# With --rtl it also runs layer 0 of each model on the generated RTL in Verilator
# (bit-exact against the golden model; a few minutes each) and prints its measured
# cycles per layer and the cycle model's error against them. Also BERT-Base in BF16 on
# configs/16x16_bf16_transformer.toml (Voyager publishes no BF16 cycles: its int8 total
# beside it), and BERT-Base in MXINT8 on configs/32x32_mxint8_transformer.toml.
# Usage: scripts/bench_transformers.sh [--rtl]
set -euo pipefail
cd "$(dirname "$0")/.."
rtl=0
[ "${1:-}" = "--rtl" ] && rtl=1
[ $rtl -eq 1 ] && scripts/setup.sh >/dev/null

cargo build --release --quiet
export HWGEN_CACHE=${HWGEN_CACHE:-$PWD/target/hwgen-cache}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
models=(bert_base mobilebert_tiny vit_base llama32_1b_layer)
configs=(16x16_int8_transformer 32x32_int8_transformer)
for m in "${models[@]}"; do
  for c in "${configs[@]}"; do
    ./target/release/hwgen compile --config "configs/$c.toml" --model "models/$m.toml" \
      --estimate --json > "$out/$m.$c.json"
  done
done
# BERT-Base without integer quantization (FP32 biases, residual adds and row operators):
# `retype MODEL OUT HEADER` gives the model the type lines HEADER and drops its integer
# parameters.
retype() {
  python3 - "$1" "$2" "$3" <<'PY'
import re, sys
s = open(sys.argv[1]).read().replace("\n[input]", "\n" + sys.argv[3] + "\n[input]", 1)
s = re.sub(r'bias = "random:\d+"', 'bias = "random"', s)
s = re.sub(r'\n(requant|scales|zero_points|scale) = \{[^}]*\}', '', s)
open(sys.argv[2], "w").write(s)
PY
}
# In BF16 on the BF16 transformer design, and in MXINT8 (blocks of 32: row operators and
# attention on MX blocks) on the 32x32 MXINT8 transformer design.
retype models/bert_base.toml "$out/bert_base_bf16.toml" 'type = "bf16"'
./target/release/hwgen compile --config configs/16x16_bf16_transformer.toml \
  --model "$out/bert_base_bf16.toml" --estimate --json > "$out/bert_base_bf16.json"
retype models/bert_base.toml "$out/bert_base_mx.toml" $'type = "mxint8"\nblock_size = 32'
./target/release/hwgen compile --config configs/32x32_mxint8_transformer.toml \
  --model "$out/bert_base_mx.toml" --estimate --json > "$out/bert_base_mx.json"
if [ $rtl -eq 1 ]; then
  for m in bert_base mobilebert_tiny vit_base; do
    # Layer 0 alone (ViT: with its patch embedding), its last layer the output.
    python3 - "models/$m.toml" "$out/$m.l0.toml" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
blocks = src.split("[[layer]]")
keep = [b for b in blocks[1:] if re.search(r'name = "(l0_|embed")', b)]
last = re.search(r'name = "([^"]+)"', keep[-1]).group(1)
head = blocks[0].replace("\n[input]", f'\noutputs = ["{last}"]\n[input]', 1)
open(sys.argv[2], "w").write(head + "".join("[[layer]]" + b for b in keep))
PY
    for c in "${configs[@]}"; do
      ./target/release/hwgen sim --config "configs/$c.toml" --model "$out/$m.l0.toml" \
        --layers --json > "$out/$m.l0.$c.json"
    done
  done
fi
python3 - "$out" "$rtl" <<'PY'
import json, os, sys
out, rtl = sys.argv[1], sys.argv[2] == "1"
configs = ["16x16_int8_transformer", "32x32_int8_transformer"]
pes = {configs[0]: 256, configs[1]: 1024}
# Voyager (Appendix A), total cycles on 16x16 and 32x32.
voyager = {"bert_base": (46070904, 12243503), "mobilebert_tiny": (7713636, 2369283),
           "vit_base": (84369325, 22741874)}
# Voyager's rows for one encoder layer: (its layer, instances per layer, cycles 16x16,
# cycles 32x32), against our layer(s) of layer 0 (a prefix of the name after "l0_").
rows = {
    "bert_base": [
        ("q k v", "attention_self_key_fused", 3, 295053, 73965, ["q", "k", "v"]),
        ("scores", "matmul_24_fused (x12 heads)", 12, 5135, 1778, ["s"]),
        ("softmax", "softmax_12_fused (x12 heads)", 12, 6379, 3304, ["p"]),
        ("weighted values", "matmul_36_fused (x12 heads)", 12, 4237, 1261, ["a"]),
        ("out proj + residual", "attention_output_dense_fused", 1, 298537, 76485, ["r1"]),
        ("layernorm", "layer_norm_fused", 2, 49462, 24883, ["n1", "f0_n"]),
        ("FFN up + GELU", "intermediate_dense_fused", 1, 1179790, 295149, ["f0_act"]),
        ("FFN down + residual", "output_dense_fused", 1, 1180393, 297092, ["f0_r"]),
    ],
    "vit_base": [
        ("q k v (per head)", "attention_key_fused", 3, 516230, 129250, ["_q", "_k", "_v"]),
        ("scores (per head)", "matmul_24_1_fused (x12)", 12, 14500, 4439, ["_s"]),
        ("softmax (per head)", "softmax_12_fused (x12)", 12, 19057, 9646, ["_p"]),
        ("weighted values (per head)", "matmul_36_1_fused (x12)", 12, 12678, 3362, ["_a"]),
        ("out proj + residual", "attention_output_dense_fused_1", 1, 516641, 132536, ["r1"]),
        ("layernorm", "layer_norm_fused", 2, 86334, 43323, ["n1", "n2"]),
        ("FFN up + GELU", "intermediate_dense_fused", 1, 2064930, 519608, ["act"]),
        ("FFN down + residual", "output_dense_fused", 1, 2064930, 519608, ["r2"]),
    ],
}

def load(name):
    return json.load(open(os.path.join(out, name)))

print(f"{'model':<17} {'config':<23} {'estimated':>11} {'ideal':>11} {'util':>6} "
      f"{'Voyager':>11} {'vs Voyager':>10}")
for m in ["bert_base", "mobilebert_tiny", "vit_base"]:
    for i, c in enumerate(configs):
        r = load(f"{m}.{c}.json")
        ideal = r["macs"] / pes[c]
        v = voyager[m][i]
        print(f"{m:<17} {c:<23} {r['estimated_cycles']:>11} {ideal:>11.0f} "
              f"{100 * ideal / r['estimated_cycles']:>5.1f}% {v:>11} "
              f"{100 * (r['estimated_cycles'] / v - 1):>+9.1f}%")
r = load("bert_base_bf16.json")
ideal = r["macs"] / 256
print(f"{'bert_base (bf16)':<17} {'16x16_bf16_transformer':<23} {r['estimated_cycles']:>11} "
      f"{ideal:>11.0f} {100 * ideal / r['estimated_cycles']:>5.1f}% {voyager['bert_base'][0]:>11} "
      f"{100 * (r['estimated_cycles'] / voyager['bert_base'][0] - 1):>+9.1f}%  (Voyager's int8 total)")
r = load("bert_base_mx.json")
ideal = r["macs"] / 1024
print(f"{'bert_base (mxint8)':<17} {'32x32_mxint8_transformer':<23} {r['estimated_cycles']:>11} "
      f"{ideal:>11.0f} {100 * ideal / r['estimated_cycles']:>5.1f}% {voyager['bert_base'][1]:>11} "
      f"{100 * (r['estimated_cycles'] / voyager['bert_base'][1] - 1):>+9.1f}%  (Voyager's int8 total)")
# LLaMA: 16 decoder layers; Voyager's 688.0M on 32x32 includes its lm_head row
# (8,127,936 cycles) and its MLP rows hold more MACs per layer than LLaMA's three
# projections (its gate row is twice the up row).
r = load(f"llama32_1b_layer.{configs[1]}.json")
layer = r["estimated_cycles"]
print(f"\nllama32_1b (32x32): one decoder layer {layer} cycles estimated "
      f"({100 * r['macs'] / 1024 / layer:.1f}% MAC utilization); 16 layers {16 * layer}; "
      f"with Voyager's lm_head row {16 * layer + 8127936} vs Voyager's 687950352 "
      f"({100 * ((16 * layer + 8127936) / 687950352 - 1):+.1f}%)")

def layer_cycles(layers, prefixes, model, key):
    total = 0
    for l in layers:
        name = l["name"]
        if not name.startswith("l0_"):
            continue
        rest = name[3:]
        for p in prefixes:
            hit = rest.endswith(p) if p.startswith("_") else rest == p
            if hit:
                total += l[key]
    return total

for m, table in rows.items():
    for i, c in enumerate(configs):
        r = load(f"{m}.{c}.json")
        sim = load(f"{m}.l0.{c}.json") if rtl else None
        print(f"\n{m} layer 0 on {c}: ours (estimated{', measured in RTL' if rtl else ''}) "
              f"vs Voyager's rows x instances")
        print(f"{'work':<27} {'estimated':>10}" + (f" {'RTL':>10}" if rtl else "") +
              f"  {'Voyager row':<31} {'cycles':>10}")
        for work, vrow, count, v16, v32, prefixes in table:
            est = layer_cycles(r["layers"], prefixes, m, "estimated_cycles")
            line = f"{work:<27} {est:>10}"
            if rtl:
                line += f" {layer_cycles(sim['layers'], prefixes, m, 'cycles'):>10}"
            line += f"  {vrow:<31} {count * (v16, v32)[i]:>10}"
            print(line)
        if rtl:
            print(f"layer 0 in RTL: {sim['cycles']} cycles, bit-exact: {sim['match']}, "
                  f"cycle model {100 * sim['estimator_error']:+.1f}%")
PY
