// Samples read from data files (--data), for a model's declared inputs.
#pragma once

#include <vector>

#include "convgate/core/limits.h"
#include "convgate/core/signature.h"
#include "convgate/inputs/dataset.h"
#include "convgate/inputs/input_options.h"
#include "convgate/loaders/data_spec.h"

namespace convgate::loaders {

struct LoaderOptions {
  std::vector<DataSpec> specs;  // one per input at most
  ImageOptions image;
  AudioOptions audio;
  TokenOptions tokens;
  int max_samples = 0;  // > 0 (--samples given with --data): keep the first ones
};

// Reads every spec's files into rows of its input and stacks them into samples: one row per
// file (per frame of audio, per sequence or CSV row), `batch` rows per sample when the input's
// dim 0 is a batch of that size (fixed, or bound with --dim or --shape). The samples are as many
// as the fewest rows of any spec give (the rest noted). Inputs no spec feeds are generated as
// inputs::GenerateDataset makes them under `generate`, except an attention mask beside token
// ids, which marks the tokens and their padding. Files are read in sorted order and recorded with
// their sha256 in Dataset::files.
// `stream`: a streamed dataset (inputs::Dataset::make): sample 0 made now, the others when asked,
// image files decoded then (a folder of thousands is never held).
// InvalidArgument (a usage error) for a spec naming no input, two specs for one input, an input a
// kind cannot fill (its rank or dtype) or a size only the user can give (an image input with
// dynamic height and width and no --resize); NotFound when a spec's path names no file; DataLoss
// naming the file for one that cannot be decoded.
Result<inputs::Dataset> LoadData(const LoaderOptions& options, const Signature& signature,
                                 const inputs::InputOptions& generate, const Limits& limits,
                                 bool stream = false);

}  // namespace convgate::loaders
