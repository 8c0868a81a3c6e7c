"""Auditing PyTorch/Opacus training: the training run as a mechanism, canaries, accountants, data.

- :mod:`.user`: :class:`UserTraining`, a user's ``train(X, y, seed) -> model`` as it is written
  (their model, data, loss and seeding), with dpaudit's canary row, black-box scores of the final
  model, a white-box probe read from the parameters of any loop, or the trainer's own
  ``grad_canary`` hook, against the user's claim or an accountant's;
- :mod:`.crafted`: rows dpaudit crafts against the canary, noise columns, and the energy and
  shuffled views that read them;
- :mod:`.scores`: black-box scores of the canary's logits in float64 that do not saturate;
- :mod:`.watch`: the Dirac probe in a model the user's code builds, and its updates read from the
  parameters after every step;
- :mod:`.mechanism`: :class:`TorchTraining`, one training per output, white-box (every update of a
  Dirac gradient canary's coordinate) or black-box (the final model's loss, logit or margin on an
  input canary);
- :mod:`.loops`: :class:`DPConfig` and the training functions' contract; :func:`opacus_sgd`, the
  correct Opacus trainer;
- :mod:`.canaries`: :class:`DiracCanary` and :class:`InputCanary`;
- :mod:`.probe`: the model wrapper that carries Dirac canaries, and the named models;
- :mod:`.accountants`: the claims of Opacus's RDP and PRV accountants and dp-accounting's PLD;
- :mod:`.data`: scikit-learn's digits and a synthetic data set (nothing is downloaded).

torch and opacus (the ``torch`` extra) are imported inside functions only, so this package imports
without them; faulty trainers are in :mod:`mechanisms.zoo.trainers`.
"""

from .accountants import ACCOUNTANTS, accountant_claim, accountant_epsilon, opacus_sample_rate
from .canaries import DiracCanary, InputCanary
from .data import TrainingSet, digits, synthetic
from .loops import DPConfig, make_private, opacus_sgd, run_steps
from .mechanism import SCORES, VIEWS, TorchTraining
from .scores import BLACK_BOX_SCORES, canary_score
from .user import USER_VIEWS, UserTraining
from .probe import model_factory, probed

__all__ = [
    "TorchTraining", "VIEWS", "SCORES", "UserTraining", "USER_VIEWS", "BLACK_BOX_SCORES", "canary_score",
    "DPConfig", "opacus_sgd", "make_private", "run_steps",
    "DiracCanary", "InputCanary",
    "probed", "model_factory",
    "ACCOUNTANTS", "accountant_claim", "accountant_epsilon", "opacus_sample_rate",
    "TrainingSet", "digits", "synthetic",
]
