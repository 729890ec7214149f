"""Bad input on a real table: a column all missing, text in a numeric column, an infinite value, a
category never declared. At finite ε each is handled by a public rule that the report states (never
a refusal that depends on one record's value), or refused by its dtype (the schema) in one error
naming the column and the fix, with nothing charged to the budget."""
import warnings
import numpy as np
import pandas as pd
import pytest
from dp_cd import DPClassifier, DPRegressor
from dp_cd.estimators import BudgetAccountant, MISSING_RULE
from dp_cd.preprocessing import DPStandardScaler
from dp_cd.tuned import DPClassifierCV

COLOUR = pd.CategoricalDtype(["red", "green", "blue"])   # the PUBLIC categories (schema)


def table(n=3000, seed=0):
    g = np.random.default_rng(seed)
    df = pd.DataFrame({"income": g.lognormal(10, 1, n), "age": g.integers(18, 90, n).astype(float),
                       "notes": np.nan,   # a column all missing
                       "colour": pd.Series(g.choice(["red", "green"], n)).astype(COLOUR)})
    y = (np.log(df.income) - 10 + (df.colour == "red") + g.logistic(size=n) > 0.5).to_numpy()
    return df, y


def fit(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return est, [str(w.message) for w in caught]


def neighbours(kind):
    "Two replace-one neighbouring tables that differ in one cell of record 7 (the bad one, a good one)."
    df, y = table()
    bad, good = df.copy(), df.copy()
    if kind == "text":   # the column's dtype (object) is the schema's in both
        bad["age"] = bad["age"].astype(object)
        good["age"] = good["age"].astype(object)
        bad.loc[7, "age"] = "unknown"
    elif kind == "inf":
        bad.loc[7, "income"] = np.inf
        good.loc[7, "income"] = 1e300
    elif kind == "missing":
        bad.loc[7, "income"] = np.nan
    return bad, good, y


@pytest.mark.parametrize("kind", ["text", "inf", "missing"])
@pytest.mark.parametrize("make", [lambda: DPClassifier(classes=[False, True], random_state=0),
                                  lambda: DPRegressor(random_state=0)])
def test_one_bad_cell_is_never_a_refusal(kind, make):
    "Both neighbours fit, privately, with the same warnings (none names a cell) and the rule stated."
    bad, good, y = neighbours(kind)
    y = y.astype(float)
    (m_bad, w_bad), (m_good, w_good) = fit(make(), bad, y), fit(make(), good, y)
    for m in (m_bad, m_good):
        assert m.privacy_.is_private and m.privacy_.epsilon <= 1.0 + 1e-9
        assert np.all(np.isfinite(m.coef_))
        assert sum(MISSING_RULE in n for n in m.privacy_.notes) == 1
    assert not any("unknown" in w for w in w_bad)
    strip = lambda ws: sorted(w for w in ws if "fell back" not in w and "no private bound" not in w)
    assert strip(w_bad) == strip(w_good)   # what is said depends on the dtypes, not on a cell
    if kind == "inf":   # +inf is clipped into the box like any large value: the same model
        np.testing.assert_array_equal(m_bad.coef_, m_good.coef_)


def test_text_cell_is_missing():
    "A cell that is not a number is read as missing: the same model as NaN there, bit for bit."
    bad, _, y = neighbours("text")
    nan = bad.copy()
    nan.loc[7, "age"] = np.nan
    m_text, _ = fit(DPClassifier(classes=[False, True], random_state=1), bad, y)
    m_nan, _ = fit(DPClassifier(classes=[False, True], random_state=1), nan, y)
    np.testing.assert_array_equal(m_text.coef_, m_nan.coef_)
    np.testing.assert_array_equal(m_text.decision_function(bad), m_nan.decision_function(nan))


def test_column_all_missing_is_handled_and_reported():
    "A column all missing: its values are the centre, its bound the public default (named)."
    df, y = table()
    m, w = fit(DPClassifier(classes=[False, True], random_state=0), df, y)
    j = list(m.feature_names_in_).index("notes")
    assert m.bounds_[j] == 1.0   # the public default
    assert any("|notes|" in n for n in m.privacy_.notes)   # the fallback, in the report
    # prediction: a missing value is the centre, whatever the column's coefficient
    filled = df.assign(notes=m.center_[j])
    np.testing.assert_allclose(m.decision_function(df), m.decision_function(filled), rtol=0,
                               atol=1e-12)


def test_undeclared_category_is_a_public_value():
    """A value outside the declared categories: pandas holds it as missing, the encoding gives the
    all-zero block, at fit and at prediction (a prediction frame declaring other categories too)."""
    df, y = table()
    m, _ = fit(DPRegressor(random_state=0), df, y.astype(float))
    assert list(m.feature_names_in_[-3:]) == ["colour=red", "colour=green", "colour=blue"]
    other = df.head(20).assign(colour=pd.Categorical(["violet"] * 20, ["violet", "red"]))
    missing = df.head(20).assign(colour=pd.Categorical([np.nan] * 20, COLOUR.categories))
    np.testing.assert_array_equal(m.predict(other), m.predict(missing))
    refit, _ = fit(DPRegressor(random_state=0), df.assign(
        colour=df.colour.cat.set_categories(COLOUR.categories)), y.astype(float))
    np.testing.assert_array_equal(refit.coef_, m.coef_)


def test_refusals_name_the_column_and_charge_nothing():
    """What is refused is refused by a dtype (the schema): text at ε = ∞ (not private), a text column
    of a Dask DataFrame, a categorical column for the scaler. One error, naming the column and the
    fix; the budget is untouched."""
    df, y = table()
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    text = df.assign(colour=df.colour.astype(str))
    with pytest.raises(ValueError, match="column 'colour' of X holds text: declare its PUBLIC "
                                         "categories"):
        DPRegressor(epsilon=np.inf).fit(text, y.astype(float))
    with pytest.raises(ValueError, match=r"columns \['colour'\] of X are categorical"):
        DPStandardScaler(budget=acc).fit(df)
    dd = pytest.importorskip("dask.dataframe")
    with pytest.raises(ValueError, match="column 'colour' of X holds text or categories Dask does "
                                         "not know: declare its PUBLIC categories"):
        DPRegressor(budget=acc).fit(dd.from_pandas(text, npartitions=2), y.astype(float))
    assert acc.spent == []


def test_scaler_takes_the_bad_cells():
    "The pipeline's scaler: text, inf and a column all missing, at finite ε, fitted and charged once."
    df, _ = table()
    X = df.drop(columns="colour").astype(object)
    X.loc[7, "age"], X.loc[8, "income"] = "unknown", np.inf
    acc = BudgetAccountant(epsilon=1.0, delta=1e-3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sc = DPStandardScaler(epsilon=0.5, budget=acc, random_state=0).fit(X)
        Z = sc.transform(X)
    assert not any("unknown" in str(w.message) for w in caught)
    assert np.all(np.isfinite(Z)) and len(acc.spent) == 1
    assert 2 in sc.fell_back_   # the column all missing: the public default, listed


def test_tuned_estimator_takes_the_table():
    "The tuned classifier on the same table: private, the rule stated, no refusal."
    bad, _, y = neighbours("text")
    bad.loc[3, "income"] = np.inf
    m, w = fit(DPClassifierCV(classes=[False, True], random_state=0), bad, y)
    assert m.privacy_.is_private and m.privacy_.epsilon <= 1.0 + 1e-9
    assert any(MISSING_RULE in n for n in m.privacy_.notes)
    assert not any("unknown" in x for x in w)
