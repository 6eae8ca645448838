"""When each rule may report, told from a file's prescan without importing its check
(:mod:`mplint.rule.gates`). Written by ``python scripts/gates.py`` from the checks; do not
edit: ``tests/test_gates.py`` compares it with them."""

from typing import Dict

from mplint.rule.gates import Gate

GATES: Dict[str, Gate] = {
    'MP101': (((b'float16', b'half', 'policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy', 'library'),),),
    'MP102': (((b'float16', b'half', 'policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy', 'library'),),),
    'MP201': (((b'auto_mixed_precision', 'policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'), (b'apply', b'minimize')),),
    'MP202': ((('policy_elsewhere',), (b'apply',)), (('policy_elsewhere',), (b'minimize',)), (('drops_base_scaling',),), ((b'LossScaleOptimizer',), (b'apply',)), ((b'LossScaleOptimizer',), (b'minimize',)), ((b'apply',), (b'get_scaled_loss',)), ((b'apply',), (b'loss_scale_factor',)), ((b'apply',), (b'mixed_float16',)), ((b'apply',), (b'scale_loss',)), ((b'apply',), (b'set_dtype_policy',)), ((b'apply',), (b'set_global_policy',)), ((b'apply',), (b'set_policy',)), ((b'get_scaled_loss',), (b'minimize',)), ((b'loss_scale_factor',), (b'minimize',)), ((b'minimize',), (b'mixed_float16',)), ((b'minimize',), (b'scale_loss',)), ((b'minimize',), (b'set_dtype_policy',)), ((b'minimize',), (b'set_global_policy',)), ((b'minimize',), (b'set_policy',))),
    'MP203': (((b'get_scaled_loss',),),),
    'MP204': (((b'graph_rewrite',),),),
    'MP205': (((b'LossScaleOptimizer',),),),
    'MP206': (((b'LossScaleOptimizer', b'scale_loss', 'policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'), (b'apply', b'minimize')),),
    'MP207': (((b'get_scaled_loss', b'get_unscaled_gradients', b'scale_loss', b'minimize', b'LossScaleOptimizer'),),),
    'MP208': (((b'get_unscaled_gradients', b'scale_loss'),),),
    'MP209': (((b'auto_mixed_precision', 'policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'), (b'GradientTape',)),),
    'MP210': (((b'get_scaled_loss', b'scale_loss'), (b'float16', b'half', b'cast', b'convert_image_dtype')),),
    'MP211': (((b'mixed', 'policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'), (b'deepxde',)),),
    'MP301': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'),),),
    'MP302': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'),),),
    'MP303': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'),),),
    'MP304': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'),),),
    'MP401': (((b'graph_rewrite', b'auto_mixed_precision', b'TF_ENABLE_AUTO_MIXED_PRECISION'),),),
    'MP402': (((b'experimental',), (b'LossScale',)), ((b'experimental',), (b'mixed_precision',)), ((b'graph_rewrite',),)),
    'MP403': (((b'set_global_policy', b'set_policy', b'set_dtype_policy'),),),
    'MP404': (((b'float16', b'half', b'set_floatx', 'policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'),),),
    'MP405': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'),),),
    'MP406': (((b'set_global_policy', b'set_policy', b'set_dtype_policy'),),),
    'MP407': (((b'graph_rewrite', b'auto_mixed_precision'),),),
    'MP408': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'),),),
    'MP501': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy', 'library'),),),
    'MP502': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy', 'library'),),),
    'MP503': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'),),),
    'MP504': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy', 'library'),),),
    'MP505': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'),),),
    'MP506': ((('policy_elsewhere',), (b'**',)), (('policy_elsewhere',), (b'norm',)), (('policy_elsewhere',), (b'pow',)), (('policy_elsewhere',), (b'shape',)), (('policy_elsewhere',), (b'sum',)), (('library',), (b'**',)), (('library',), (b'norm',)), (('library',), (b'pow',)), (('library',), (b'shape',)), (('library',), (b'sum',)), ((b'**',), (b'set_dtype_policy',)), ((b'**',), (b'set_global_policy',)), ((b'**',), (b'set_policy',)), ((b'norm',), (b'set_dtype_policy',)), ((b'norm',), (b'set_global_policy',)), ((b'norm',), (b'set_policy',)), ((b'pow',), (b'set_dtype_policy',)), ((b'pow',), (b'set_global_policy',)), ((b'pow',), (b'set_policy',)), ((b'set_dtype_policy',), (b'shape',)), ((b'set_dtype_policy',), (b'sum',)), ((b'set_global_policy',), (b'shape',)), ((b'set_global_policy',), (b'sum',)), ((b'set_policy',), (b'shape',)), ((b'set_policy',), (b'sum',))),
    'MP507': ((('policy_elsewhere', b'set_global_policy', b'set_policy', b'set_dtype_policy'), (b'Independent',)),),
    'MP900': (((b'NOQA',),), ((b'NoQA',),), ((b'Noqa',),), ((b'noqa',),)),
}
