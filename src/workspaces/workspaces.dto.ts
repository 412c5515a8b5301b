import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { Role, ROLES } from '../access/roles';

// class-validator checks decorators bottom-up and the pipe stops at the first failure, so
// the type check sits closest to the property: a number gets "must be a string".

@ApiSchema({ name: 'CreateWorkspace' })
export class CreateWorkspaceDto {
  @ApiProperty({ example: 'Marketing', maxLength: 200 })
  @MaxLength(200)
  @IsNotEmpty()
  @IsString()
  name!: string;
}

@ApiSchema({ name: 'CreateApiKey' })
export class CreateApiKeyDto {
  @ApiPropertyOptional({ example: 'CI publisher', maxLength: 200 })
  @IsOptional()
  @MaxLength(200)
  @IsNotEmpty()
  @IsString()
  name?: string;

  @ApiPropertyOptional({ enum: ROLES, enumName: 'Role', default: 'owner', description: 'what the key may do; at most your own role' })
  @IsOptional()
  @IsIn(ROLES)
  role?: Role;
}
