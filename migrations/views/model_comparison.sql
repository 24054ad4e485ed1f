-- The comparison over every experiment: compare_experiments() without a filter.
CREATE VIEW model_comparison AS SELECT * FROM compare_experiments();
