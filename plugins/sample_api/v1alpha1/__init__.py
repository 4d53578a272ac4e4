"""wardle.example.com/v1alpha1: Flunder and Fischer; the storage version of the group.

Mirrors ``pkg/apis/wardle/v1alpha1``. Its Flunder names one ``reference`` whose meaning
``referenceType`` gives, so it needs defaulting (``defaults.py``) and hand-written conversion
(``conversion.py``). Fischer has the internal shape and converts automatically.
"""
