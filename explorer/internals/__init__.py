"""A loaded model's insides: where its blocks, sublayers, heads and neurons are (``sites``), shared by the lens,
attribution and interventions."""
