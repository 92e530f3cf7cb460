"""chronolog on Apache Spark (DESIGN.md section 4): the session, and the background closure
as semi-naive Datalog over DataFrames, written to Parquet for the streaming runner."""
