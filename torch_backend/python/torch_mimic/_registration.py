"""Imports every module that registers aten kernels for the device."""
from . import ops_pointwise, ops_random, ops_reduce, ops_shape  # noqa: F401
from . import ops_nn, ops_nn_conv, ops_nn_loss, ops_nn_norm, ops_nn_pool  # noqa: F401
