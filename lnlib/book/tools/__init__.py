"""The book's machinery: prose numbers and glue, exercise feedback, PyTorch's stored outputs,
notebook and website helpers."""
