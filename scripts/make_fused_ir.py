"""Writes an OpenVINO IR of an ONNX model as OpenVINO up to 2022 wrote one after folding a
BatchNorm into the convolution before it: the test fixture of per-node validation against an IR
(gate/per_node/fusion.cc).

    <venv>/bin/python scripts/make_fused_ir.py MODEL.onnx OUT.xml

The model is converted by the venv's OpenVINO (openvino.convert_model, float32 weights), which
folds each Conv -> BatchNormalization pair into a Convolution (weights scaled by the BatchNorm)
and an Add (the folded biases). OpenVINO 2026 drops the convolution's tensor name there and writes
no rt_info on layers; OpenVINO up to 2022 kept the convolution's tensor name on the Convolution
layer, whose value is then the scaled convolution, not the ONNX tensor of that name, and listed
in each layer's rt_info which ONNX nodes it carries:

    <rt_info><attribute name="fused_names" version="0" value="Conv_0,BatchNormalization_1"/>

This script writes those two things back into the 2026 IR, so the IR runs on today's OpenVINO
and carries what the old format said. Nothing else changes; the .bin is OpenVINO's own.
"""
import sys
import xml.etree.ElementTree as ET


def conv_bn_pairs(model):
    """(conv node, batchnorm node) for every BatchNormalization fed by a Conv."""
    producer = {}
    for node in model.graph.node:
        for output in node.output:
            producer[output] = node
    pairs = []
    for node in model.graph.node:
        if node.op_type != "BatchNormalization":
            continue
        conv = producer.get(node.input[0])
        if conv is not None and conv.op_type == "Conv":
            pairs.append((conv, node))
    return pairs


def port_names(port):
    names = port.get("names")
    return names.split(",") if names else []


def add_fused_names(layer, names):
    rt_info = layer.find("rt_info")
    if rt_info is None:
        rt_info = ET.Element("rt_info")
        # rt_info comes after <data> and before <input>/<output>, as OpenVINO wrote it.
        position = 1 if layer.find("data") is not None else 0
        layer.insert(position, rt_info)
    ET.SubElement(rt_info, "attribute",
                  {"name": "fused_names", "version": "0", "value": ",".join(names)})


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    source, out = sys.argv[1], sys.argv[2]
    import onnx
    import openvino as ov
    model = onnx.load(source)
    ov.save_model(ov.convert_model(source), out, compress_to_fp16=False)
    tree = ET.parse(out)
    net = tree.getroot()
    layers = {layer.get("id"): layer for layer in net.find("layers")}
    feeds = {}  # to-layer id -> from-layer ids
    for edge in net.find("edges"):
        feeds.setdefault(edge.get("to-layer"), []).append(edge.get("from-layer"))
    folded = 0
    for conv, bn in conv_bn_pairs(model):
        names = [conv.name or conv.output[0], bn.name or bn.output[0]]
        carrier = None  # the layer that carries the BatchNorm's output
        for layer in layers.values():
            output = layer.find("output")
            if output is None or layer.get("type") == "Result":
                continue
            if any(bn.output[0] in port_names(port) for port in output):
                carrier = layer
        if carrier is None:
            continue
        convolutions = [layers[i] for i in feeds.get(carrier.get("id"), [])
                        if layers[i].get("type") == "Convolution"]
        if not convolutions:
            continue
        convolution = convolutions[0]
        for port in convolution.find("output"):
            port.set("names", conv.output[0])  # the old IR kept the convolution's name
        add_fused_names(convolution, names)
        add_fused_names(carrier, names)
        folded += 1
    if folded == 0:
        sys.stderr.write("%s: OpenVINO folded no Conv -> BatchNormalization pair\n" % source)
        return 1
    tree.write(out, encoding="utf-8", xml_declaration=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
