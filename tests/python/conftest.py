"""pytest set-up: the package under test is the build tree's (build/python), or CONVGATE_BUILD's."""

import os
import sys

BUILD = os.environ.get("CONVGATE_BUILD") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build")
sys.path.insert(0, os.path.join(BUILD, "python"))
EXAMPLES = os.path.join(BUILD, "examples")
