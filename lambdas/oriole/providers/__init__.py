"""Model providers: each adapter turns the turn loop's neutral ``ModelRequest`` into its wire format,
calls the model, and turns the answer back into a ``ModelResponse``. Nothing else differs between them."""
