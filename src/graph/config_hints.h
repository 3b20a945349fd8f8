// Sizes a Hugging Face export's config files give an ONNX model's symbolic input dims. optimum
// declares ViT's pixel_values [batch_size, num_channels, height, width] and wav2vec2's input_values
// [batch_size, sequence_length]; bound to 1 they fail in the first Conv. The folder the export
// sits in says what the model was built for. Internal to src/graph.
#pragma once

#include <filesystem>

#include "convgate/core/signature.h"

namespace convgate::graph {

// Adds InputHint::dim_defaults to the float inputs of `signature` from `folder`/config.json (and
// preprocessor_config.json), when the folder holds one:
//   - rank 4 [N, C, H, W]: H and W from image_size (an int, or [h, w]), C from num_channels, read
//     from vision_config when the config has one (CLIP);
//   - rank 2 input_values [N, samples]: one second at preprocessor_config.json's sampling_rate.
// Only symbolic dims get a default; a config that is missing or not JSON adds nothing.
void AddConfigHints(const std::filesystem::path& folder, Signature& signature);

}  // namespace convgate::graph
