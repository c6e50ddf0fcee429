"""Peers: plain training loops written with the libraries other people train
these models with (timm's ``create_model``, Hugging Face's
``GPT2LMHeadModel``), importing nothing from the studio's workers, so a
studio run on the same device, batch and precision gets a studio ÷ peer
ratio. ``python -m trainbench_peers --help``."""
