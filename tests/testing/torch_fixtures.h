// The fixture folders made by the scripts that cache them: the torchvision models
// (scripts/make_torch_fixtures.sh), for tests labelled torch, the tiny Hugging Face zoo, and the
// If/Loop/Scan models.
#pragma once

#include <string>

namespace convgate::testing {

// Runs the fixture script (a cache hit after CTest's torch_fixtures setup test: ~0.1 s) and
// returns the folder it prints on its last line. On failure returns "" and sets `error` to the
// script's exit code and output.
std::string TorchFixtureFolder(std::string& error);

// The same for the tiny offline Hugging Face zoo (scripts/make_hf_zoo.sh; the hf_zoo_fixtures
// setup test builds it once).
std::string HfZooFolder(std::string& error);

// The same for the If/Loop/Scan models of per-node subgraph validation
// (scripts/make_subgraph_fixtures.py; under a second the first time, no setup test needed).
std::string SubgraphFixtureFolder(std::string& error);
// The same for the TensorFlow SavedModel fixture (scripts/make_tf_fixtures.sh), which needs the
// venv's tensorflow-cpu.
std::string TfFixtureFolder(std::string& error);

// The venv's python as convgate finds it (core/python_env.h): $CONVGATE_VENV/bin/python, else
// ${CONVGATE_DEPS:-~/.cache/convgate-deps}/venv/bin/python.
std::string VenvPython();

// The same for the pipeline fixtures (scripts/make_pipeline_fixtures.sh; the pipeline_fixtures
// CTest setup test).
std::string PipelineFixtureFolder(std::string& error);

}  // namespace convgate::testing
