"""The store's reads for the dashboard's pages, one module per page (dashboard.queries
names them for the views): SQL to small DataFrames, no Streamlit and no MPI."""
