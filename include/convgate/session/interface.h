// How two models whose interfaces differ correspond. Converters rename inputs and outputs
// (`input.1` for `x`; TensorFlow's `x:0`) and change layouts (onnx2tf turns NCHW into NHWC); the
// data set is made for the source, and the target takes it through this binding: renamed, and
// transposed where the target's layout differs, with its outputs renamed and transposed back.
//
// Inputs and outputs bind by, in order: --map SOURCE=TARGET; the same name; the same name but for
// a ":0" suffix; position, when both sides have as many and the shapes agree. Every binding that
// is not by name is stated in the report.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/session/records.h"

namespace convgate::session {

enum class TensorLayout { kAsIs, kNhwc };

struct InterfaceOptions {
  std::vector<std::pair<std::string, std::string>> map;  // --map SOURCE_NAME=TARGET_NAME
  // --target-layout: the target's 4-D tensors are NHWC where the source's are NCHW; per tensor
  // (by the source's name) or, under "", for every 4-D input and output.
  std::map<std::string, TensorLayout> target_layout;
  std::vector<std::string> outputs;          // --outputs: compare only these (source names)
  std::vector<std::string> exclude_outputs;  // --exclude-outputs
};

// "SOURCE=TARGET" into options.map. InvalidArgument for a missing '=' or an empty name.
Status AddMapping(std::string_view text, InterfaceOptions& options);
// "nhwc", "nchw" (as is), or "NAME:nhwc".
Status AddTargetLayout(std::string_view text, InterfaceOptions& options);

class InterfaceBinding {
 public:
  // Binds the data set's inputs (`sample`, one sample) to `target`'s inputs. Notes go to
  // `record`. InvalidArgument for a --map naming an input neither side has; FailedPrecondition
  // when an input cannot be bound, naming both sides' inputs and suggesting --map or
  // --target-layout.
  static Result<InterfaceBinding> Bind(const InterfaceOptions& options, const TensorMap& sample,
                                       const Signature& target, SideRecord& record);
  // The binding of a target that is not a model (saved outputs): outputs only.
  static InterfaceBinding OutputsOnly(const InterfaceOptions& options);

  // Whether the target takes the data set as it is.
  bool identity() const { return identity_; }
  // Whether the target takes each input under its own name, untransposed, at most cast to another
  // floating dtype (an fp16 model without keep-IO-types): its intermediates still carry the
  // source's names, so they can be compared by name once its inputs are cast.
  bool names_kept() const;
  // One sample's inputs as the target takes them (copies; the source's stay as they are).
  Result<TensorMap> TargetInputs(const TensorMap& sample) const;
  // The target's outputs under the source's names, transposed back where the layout differs; on
  // the first sample the renames are recorded in `record`.
  void ToSourceNames(TensorMap& target, const TensorMap& source, SideRecord& record,
                     bool first_sample);
  // --outputs / --exclude-outputs: drops the outputs not compared.
  void Select(TensorMap& outputs) const;
  // InvalidArgument when --outputs, --exclude-outputs or --map name an output neither side has.
  Status CheckOutputNames(const std::vector<std::string>& source,
                          const std::vector<std::string>& target) const;

 private:
  struct InputBinding {
    std::string source;
    std::string target;
    bool transpose = false;
    // The target declares another floating dtype (an fp16 model without keep-IO-types): each
    // sample's input is cast to it.
    std::optional<DType> cast;
  };
  const InterfaceOptions* options_ = nullptr;
  std::vector<InputBinding> inputs_;
  bool identity_ = true;
  // Decided on the first sample: target output -> source output, and which are transposed.
  std::optional<std::vector<std::pair<std::string, std::string>>> output_names_;
  std::vector<std::string> transposed_outputs_;
};

// NCHW -> NHWC (`to_nhwc`) or back, for a 4-D tensor of any fixed-size dtype.
Result<Tensor> TransposeLayout(const Tensor& tensor, bool to_nhwc);

}  // namespace convgate::session
