
*€x€€Btyped_float16