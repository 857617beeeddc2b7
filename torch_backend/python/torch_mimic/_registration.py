"""Imports every module that registers aten kernels for the device: each ``ops_*.py`` of the
package, in name order, so that a new family of ops is a new file."""
import importlib
import os
import pkgutil

_OP_MODULES = sorted(module.name for module in pkgutil.iter_modules([os.path.dirname(__file__)])
                     if module.name.startswith("ops_"))
for _name in _OP_MODULES:
    importlib.import_module(f"{__package__}.{_name}")
