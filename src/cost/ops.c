/* ops.c: the operator table.  Names are a stable contract (CSV `op`).
 * Kernels as a GPU runs them (op_info.kernels, fused_into):
 * - kv_down shares q_down's GEMM: the two down-projections read the same
 *   hidden state and run as one GEMM of their joint width (vLLM's
 *   DeepseekV2 fused_qkv_a_proj, vllm/model_executor/models/deepseek_v2.py).
 * - gather is inside attention: FlashMLA's sparse decode kernel reads the
 *   selected rows by index itself (github.com/deepseek-ai/FlashMLA README,
 *   flash_mla_with_kvcache with `indices`).
 * - attention is two kernels: the split-KV pass and the combine of the
 *   splits (FlashMLA csrc/kernels/mla_combine.cu; FlashInfer's decode
 *   merges states the same way).
 * - an FFN (dense, shared or routed experts) is three: the gate-up GEMM,
 *   the SiLU-and-multiply (with the FP8 quantisation of its output), the
 *   down GEMM (vLLM DeepseekV2MLP gate_up_proj, SiluAndMul, down_proj;
 *   DeepGEMM's masked grouped GEMM for the routed experts). */
#include "cost/ops.h"

const struct op_info op_table[OP_N] = {
	[OP_ATTN_NORM] = {"attn_norm", OC_ELEMENTWISE, SIDE_GPU, 0, "RMSNorm before attention"},
	[OP_QKV_PROJ] = {"qkv_proj", OC_GEMM, SIDE_GPU, 0, "GQA fused Q, K, V projection"},
	[OP_Q_PROJ] = {"q_proj", OC_GEMM, SIDE_GPU, 0, "MLA query projection without a latent"},
	[OP_Q_DOWN] = {"q_down", OC_GEMM, SIDE_GPU, 0, "MLA query down-projection to the latent"},
	[OP_Q_NORM] = {"q_norm", OC_ELEMENTWISE, SIDE_GPU, 0, "RMSNorm of the query latent"},
	[OP_Q_UP] = {"q_up", OC_GEMM, SIDE_GPU, 0, "MLA query up-projection to heads"},
	[OP_KV_DOWN] = {"kv_down", OC_GEMM, SIDE_GPU, 0, "MLA KV down-projection of the new token", 0, 0,
		       "q_down"},
	[OP_KV_NORM] = {"kv_norm", OC_ELEMENTWISE, SIDE_GPU, 0, "RMSNorm of the KV latent"},
	[OP_Q_ABSORB] = {"q_absorb", OC_GEMM, SIDE_GPU, 0, "MLA W_UK absorbed into the query"},
	[OP_INDEX_Q_PROJ] = {"index_q_proj", OC_GEMM, SIDE_GPU, 0, "indexer query projection"},
	[OP_INDEX_K_PROJ] = {"index_k_proj", OC_GEMM, SIDE_GPU, 0, "indexer key of the new token"},
	[OP_INDEX_W_PROJ] = {"index_w_proj", OC_GEMM, SIDE_GPU, 0, "indexer per-head weights"},
	[OP_ROPE] = {"rope", OC_ELEMENTWISE, SIDE_GPU, 0, "rotary embedding of q and k"},
	[OP_CACHE_WRITE] = {"cache_write", OC_GATHER, SIDE_CACHE, 0, "append new KV and index rows"},
	[OP_INDEX_SCAN] = {"index_scan", OC_SCAN, SIDE_CACHE, 0, "score every cached index key"},
	[OP_TOPK] = {"topk", OC_SCAN, SIDE_CACHE, 0, "select the top-k tokens or blocks", 1},
	[OP_GATHER] = {"gather", OC_GATHER, SIDE_CACHE, 0, "read the selected KV rows", 0, 0,
		       "attention"},
	[OP_ATTENTION] = {"attention", OC_ATTENTION, SIDE_CACHE, 0, "attention over the (selected) context",
			  0, 2},
	[OP_V_ABSORB] = {"v_absorb", OC_GEMM, SIDE_GPU, 0, "MLA W_UV applied to the latent output"},
	[OP_O_PROJ] = {"o_proj", OC_GEMM, SIDE_GPU, 0, "attention output projection"},
	[OP_FFN_NORM] = {"ffn_norm", OC_ELEMENTWISE, SIDE_GPU, 0, "RMSNorm before the FFN"},
	[OP_DENSE_FFN] = {"dense_ffn", OC_GEMM, SIDE_GPU, 0, "dense SwiGLU FFN", 0, 3},
	[OP_ROUTER] = {"router", OC_GEMM, SIDE_GPU, 0, "MoE gate scores"},
	[OP_DISPATCH] = {"dispatch", OC_GATHER, SIDE_LINK, 0, "all-to-all of tokens to experts"},
	[OP_EXPERTS] = {"experts", OC_GEMM, SIDE_GPU, 0, "routed experts held by this GPU", 0, 3},
	[OP_SHARED_EXPERT] = {"shared_expert", OC_GEMM, SIDE_GPU, 0, "shared experts", 0, 3},
	[OP_COMBINE] = {"combine", OC_GATHER, SIDE_LINK, 0, "all-to-all of expert outputs back"},
	[OP_FINAL_NORM] = {"final_norm", OC_ELEMENTWISE, SIDE_GPU, 0, "RMSNorm before the LM head"},
	[OP_LM_HEAD] = {"lm_head", OC_GEMM, SIDE_GPU, 0, "hidden to vocabulary logits"},
	[OP_SAMPLING] = {"sampling", OC_ELEMENTWISE, SIDE_GPU, 0, "softmax and sampling over the vocabulary"},
	[OP_MTP] = {"mtp", OC_GEMM, SIDE_GPU, 1, "MTP draft module: one decoder layer, run once per draft token"},
};

int op_gpu_kernels(enum op_kind k)
{
	const struct op_info *i = &op_table[k];
	return i->fused_into ? 0 : i->kernels > 0 ? i->kernels : 1;
}

const char *const bound_names[BOUND_N] = {"", "compute", "memory", "link",
					  "overhead", "unsupported"};
