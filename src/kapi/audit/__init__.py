"""Audit logging as kube-apiserver does it: a policy, events per request stage, a log file.

Off unless ``--audit-log-path`` is given (and, as upstream, silent without
``--audit-policy-file``): the handler chain then does no audit work at all.
"""

from kapi.audit.filter import Auditor, RequestAudit
from kapi.audit.policy import Policy, PolicyError, load_policy, load_policy_file

__all__ = ["Auditor", "Policy", "PolicyError", "RequestAudit", "load_policy", "load_policy_file"]
