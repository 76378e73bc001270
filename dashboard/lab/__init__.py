"""The Modular lab, kept apart from the store pages: `logic` (pure, no Streamlit) and `page`."""
