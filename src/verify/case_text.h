// The shape syntax of `backends --explain`, `bench attention` and `tune`,
// read into an AttentionCase:
//   "B=2,Sq=128,Sk=128,Hq=8,Hkv=8,D=64,dtype=bf16,mask=causal"
// Keys: B, S (= Sq = Sk), Sq, Sk, H (= Hq = Hkv), Hq, Hkv, D, Dv, dtype
// (f32|bf16|f16), mask (none|causal|window), window=L:R, layout (bshd|bhsd),
// lse=0|1, bias=0|1 (BiasKind::kShared, [1, Hq, Sq, Sk]), softcap=F,
// varlen=0|1 (B sequences of Sq and Sk rows packed, THD). Defaults: B=1,
// S=128, H=8, D=64, Dv=D, f32, no mask. Values are range-checked and the
// tensors' element counts bounded before anything is built from the case.
#pragma once

#include <string>
#include <vector>

#include "tessera/status.h"
#include "verify/case.h"

namespace tessera::verify {

// `out->text` keeps `text` for reports.
Status parse_case(const std::string& text, AttentionCase* out);
// Shapes joined by ';' (empty items skipped; none at all is an error).
Status parse_case_list(const std::string& text, std::vector<AttentionCase>* out);

}  // namespace tessera::verify
