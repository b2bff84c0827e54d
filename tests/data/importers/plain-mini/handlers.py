import datetime


def _loan(state, loan_id):
    for loan in state["loans"]:
        if loan["id"] == loan_id:
            return loan
    raise ValueError(f"no loan {loan_id}")


def get_loan(state, loan_id):
    return dict(_loan(state, loan_id))


def renew_loan(state, loan_id):
    loan = _loan(state, loan_id)
    if loan["renewals"] >= 2:
        raise ValueError("a loan is renewed at most twice")
    due = datetime.date.fromisoformat(loan["due"]) + datetime.timedelta(days=14)
    loan["due"], loan["renewals"] = due.isoformat(), loan["renewals"] + 1
    return dict(loan)


def unrenew_loan(state, loan_id):
    loan = _loan(state, loan_id)
    if loan["renewals"] == 0:
        raise ValueError("nothing to take back")
    due = datetime.date.fromisoformat(loan["due"]) - datetime.timedelta(days=14)
    loan["due"], loan["renewals"] = due.isoformat(), loan["renewals"] - 1
    return dict(loan)
