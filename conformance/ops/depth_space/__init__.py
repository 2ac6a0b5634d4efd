"""DEPTH_TO_SPACE, DEPTH_TO_SPACE1, SPACE_TO_DEPTH and SPACE_TO_DEPTH1: the spec (spec.py), the
package's case families (cases/) and its misreadings (misreadings.py); docs/operators.md says
what an operator package provides."""

from conformance.ops.depth_space.pages import PAGES
from conformance.ops.depth_space.spec import (
    ORDER,
    ORDERS,
    DepthToSpace,
    DepthToSpace1,
    SpaceToDepth,
    SpaceToDepth1,
    depth_to_space,
    space_to_depth,
)

OPERATORS = (DepthToSpace(), DepthToSpace1(), SpaceToDepth(), SpaceToDepth1())

__all__ = ["OPERATORS", "ORDER", "ORDERS", "PAGES", "DepthToSpace", "DepthToSpace1",
           "SpaceToDepth", "SpaceToDepth1", "depth_to_space", "space_to_depth"]
