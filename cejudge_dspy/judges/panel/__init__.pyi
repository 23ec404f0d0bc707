"""The names of the panel face, one list: lazy_loader.attach_stub imports each on first use
(__init__.py), and type checkers and the API docs read them here."""

from ._combine import (
    NO_MAJORITY as NO_MAJORITY,
)
from ._combine import (
    MemberOutcome as MemberOutcome,
)
from ._combine import (
    agreement_share as agreement_share,
)
from ._combine import (
    combine as combine,
)
from ._combine import (
    majority as majority,
)
from ._combine import (
    vote_entropy as vote_entropy,
)
from ._judge import (
    PanelJudge as PanelJudge,
)
from ._judge import (
    panel_backbones as panel_backbones,
)
from ._judge import (
    panel_lms as panel_lms,
)
from ._members import (
    PanelMember as PanelMember,
)
from ._members import (
    check_members as check_members,
)
from ._members import (
    check_names as check_names,
)
from ._members import (
    members_from_flags as members_from_flags,
)
from ._members import (
    read_panel_file as read_panel_file,
)
