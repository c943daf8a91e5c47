"""The shipped presets: `preset = "NAME"` puts NAME.toml under a config file."""
